#include "core/files.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace headroom::core {
namespace {

namespace fs = std::filesystem;

// A fresh directory only this user can write (mkdtemp's 0700), removed at the end.
class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "headroom-files-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static bool Contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }

  fs::path dir_;
};

// Issue 44, finding 8: a FIFO with no writer blocked the open for ever, deaf to SIGTERM.
TEST_F(FilesTest, ReadFileRefusesAFifoWithoutBlocking) {
  const std::string fifo = Path("state.json");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto text = ReadFile(fifo);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().code(), Code::kInvalidArgument);
  EXPECT_EQ(text.error().message(), fifo + ": not a regular file (a FIFO)");
  EXPECT_FALSE(ReadPrivateFile(fifo));
}

TEST_F(FilesTest, ReadFileRefusesASocketADeviceAndADirectory) {
  const std::string socket_path = Path("sock");
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.size(), sizeof(addr.sun_path));
  socket_path.copy(addr.sun_path, socket_path.size());
  ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(ReadFile(socket_path).error().message(),
            socket_path + ": not a regular file (a socket)");
  ::close(s);
  EXPECT_EQ(ReadFile("/dev/null").error().message(),
            "/dev/null: not a regular file (a character device)");
  EXPECT_EQ(ReadFile(dir_.string()).error().message(),
            dir_.string() + ": not a regular file (a directory)");
  EXPECT_EQ(ReadFile(Path("missing")).error().code(), Code::kNotFound);
}

TEST_F(FilesTest, ReadFileReadsARegularFileWholeWithinItsBound) {
  std::ofstream(Path("a")) << "0123456789";
  EXPECT_EQ(*ReadFile(Path("a")), "0123456789");
  auto bounded = ReadFile(Path("a"), 9);
  ASSERT_FALSE(bounded);
  EXPECT_EQ(bounded.error().code(), Code::kOutOfRange);
  // A link is followed by ReadFile, never by ReadPrivateFile.
  fs::create_symlink(Path("a"), Path("link"));
  EXPECT_EQ(*ReadFile(Path("link")), "0123456789");
  auto linked = ReadPrivateFile(Path("link"));
  ASSERT_FALSE(linked);
  EXPECT_TRUE(Contains(linked.error().message(), Path("link") + ": a symbolic link; refused"))
      << linked.error().message();
}

// Issue 44, finding 7: a state file someone else can write is a way to set the GPUs.
TEST_F(FilesTest, ReadPrivateFileRefusesAFileOthersCanWriteOrOwn) {
  const std::string file = Path("state.json");
  std::ofstream(file) << "{}";
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  EXPECT_EQ(*ReadPrivateFile(file), "{}");
  ASSERT_EQ(::chmod(file.c_str(), 0620), 0);
  EXPECT_EQ(ReadPrivateFile(file).error().message(), file + ": writable by its group (mode 0620)");
  ASSERT_EQ(::chmod(file.c_str(), 0666), 0);
  EXPECT_EQ(ReadPrivateFile(file).error().message(),
            file + ": writable by its group and others (mode 0666)");
  ASSERT_EQ(::chmod(file.c_str(), 0600), 0);
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  ASSERT_EQ(::chown(file.c_str(), 65534, static_cast<gid_t>(-1)), 0);
  EXPECT_EQ(ReadPrivateFile(file).error().message(),
            file + ": owned by uid 65534, not by this process's user (uid 0)");
}

TEST_F(FilesTest, CheckPrivateDirectoryRefusesADirectoryLikeTmp) {
  EXPECT_TRUE(CheckPrivateDirectory(dir_.string()));
  ASSERT_EQ(::chmod(dir_.c_str(), 01777), 0);  // the sticky bit does not make it private
  auto shared = CheckPrivateDirectory(dir_.string());
  ASSERT_FALSE(shared);
  EXPECT_EQ(shared.error().message(),
            dir_.string() + ": writable by its group and others (mode 1777)");
  ASSERT_EQ(::chmod(dir_.c_str(), 0700), 0);
  EXPECT_EQ(CheckPrivateDirectory(Path("missing")).error().code(), Code::kNotFound);
  std::ofstream(Path("file")) << "x";
  EXPECT_FALSE(CheckPrivateDirectory(Path("file")));
}

// Issue 44, finding 7: PATH.tmp was opened through a planted link, so the write landed in
// whatever file the link named.
TEST_F(FilesTest, WriteFileAtomicallyNeverWritesThroughAPlantedLink) {
  const std::string victim = Path("victim");
  std::ofstream(victim) << "precious";
  const std::string path = Path("state.json");
  fs::create_symlink(victim, path + ".tmp");
  ASSERT_TRUE(WriteFileAtomically(path, "new"));
  EXPECT_EQ(Slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_FALSE(fs::exists(fs::symlink_status(path + ".tmp")));
}

TEST_F(FilesTest, WriteFileAtomicallyReplacesAStaleTemporaryAndSetsTheMode) {
  const std::string path = Path("state.json");
  std::ofstream(path + ".tmp") << "left by a crash, longer than the new content";
  ASSERT_TRUE(WriteFileAtomically(path, "new", 0600));
  EXPECT_EQ(Slurp(path), "new");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(FilesTest, WriteFileAtomicallyNamesThePathItCannotWrite) {
  const std::string path = Path("missing-dir/state.json");
  auto written = WriteFileAtomically(path, "x");
  ASSERT_FALSE(written);
  EXPECT_TRUE(Contains(written.error().message(), path + ".tmp: cannot write"))
      << written.error().message();
}

}  // namespace
}  // namespace headroom::core
