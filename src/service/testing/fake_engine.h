// FakeEngine: a serving engine's /metrics on 127.0.0.1 (an httplib server on a free port, its own
// thread), serving whatever page a test sets, or a fresh page from a function at every GET, for
// the agent's and `measure`'s scrape tests. Thread-safe.
#ifndef HEADROOM_SERVICE_TESTING_FAKE_ENGINE_H_
#define HEADROOM_SERVICE_TESTING_FAKE_ENGINE_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include <fmt/format.h>
#include <httplib.h>

namespace headroom::service::testing {

class FakeEngine {
 public:
  // `page`, when given, makes each GET's page (called under the engine's lock).
  explicit FakeEngine(std::function<std::string()> page = {}) : make_page_(std::move(page)) {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      res.status = status_;
      res.set_content(make_page_ ? make_page_() : page_, "text/plain; version=0.0.4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeEngine() {
    server_.stop();
    thread_.join();
  }
  FakeEngine(const FakeEngine&) = delete;
  FakeEngine& operator=(const FakeEngine&) = delete;

  void Serve(std::string page, int status = 200) {
    std::lock_guard<std::mutex> lock(mu_);
    page_ = std::move(page);
    status_ = status;
  }
  std::string url() const { return fmt::format("http://127.0.0.1:{}/metrics", port_); }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::function<std::string()> make_page_;
  std::string page_;
  int status_ = 200;
};

}  // namespace headroom::service::testing

#endif  // HEADROOM_SERVICE_TESTING_FAKE_ENGINE_H_
