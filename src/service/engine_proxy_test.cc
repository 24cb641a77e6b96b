#include "service/engine_proxy.h"

#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace headroom::service {
namespace {

using std::chrono::seconds;

// Every wait in these tests is bounded by this, so that a broken proxy fails a test instead of
// hanging it.
constexpr auto kWait = seconds(10);

// Counts the proxy's signals; lets a test wait for a count without sleeping blindly.
class RecordingSignal final : public PromptSignal {
 public:
  void PromptArrived() override { Bump(arrived_); }
  void FirstTokenLeft() override { Bump(left_); }

  int arrived() const {
    std::lock_guard<std::mutex> lock(mu_);
    return arrived_;
  }
  int left() const {
    std::lock_guard<std::mutex> lock(mu_);
    return left_;
  }
  // Waits (at most kWait) until FirstTokenLeft() was called `count` times.
  bool WaitForLeft(int count) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kWait, [&] { return left_ >= count; });
  }

 private:
  void Bump(int& counter) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counter;
    changed_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable changed_;
  int arrived_ = 0;
  int left_ = 0;
};

// A one-shot gate a fake engine's stream waits on until the test opens it.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    changed_.notify_all();
  }
  bool Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kWait, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;
};

// What a client received, filled by its thread while the test watches.
class Received {
 public:
  bool Add(const char* data, size_t length) {
    std::lock_guard<std::mutex> lock(mu_);
    body_.append(data, length);
    changed_.notify_all();
    return true;
  }
  // Waits (at most kWait) until the body holds `text`.
  bool WaitFor(const std::string& text) {
    std::unique_lock<std::mutex> lock(mu_);
    return changed_.wait_for(lock, kWait, [&] { return body_.find(text) != std::string::npos; });
  }
  std::string body() const {
    std::lock_guard<std::mutex> lock(mu_);
    return body_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::string body_;
};

constexpr const char* kFirstEvent = "data: {\"choices\":[{\"text\":\"Hello\"}]}\n\n";
constexpr const char* kLastEvents =
    "data: {\"choices\":[{\"text\":\" world\"}]}\n\ndata: [DONE]\n\n";
constexpr const char* kEventStream = "text/event-stream; charset=utf-8";

class EngineProxyTest : public ::testing::Test {
 protected:
  void TearDown() override {
    release_.Open();
    if (proxy_) proxy_->Stop();
    if (proxy_thread_.joinable()) proxy_thread_.join();
    engine_.stop();
    if (engine_thread_.joinable()) engine_thread_.join();
  }

  // Starts the fake engine with the routes the test set on engine_, and the proxy in front.
  void Start() {
    engine_port_ = engine_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(engine_port_, 0);
    engine_thread_ = std::thread([this] { engine_.listen_after_bind(); });
    StartProxy(fmt::format("http://127.0.0.1:{}", engine_port_));
  }
  void StartProxy(const std::string& upstream) {
    auto proxy = EngineProxy::Create(
        {.upstream = upstream, .workers = 8, .keep_alive_timeout = seconds(1)}, &signal_);
    ASSERT_TRUE(proxy) << proxy.error().message();
    proxy_ = std::move(*proxy);
    auto port = proxy_->Bind({"127.0.0.1", 0});
    ASSERT_TRUE(port) << port.error().message();
    proxy_port_ = *port;
    proxy_thread_ = std::thread([this] {
      proxy_->Serve();
      served_.set_value();
    });
  }
  std::unique_ptr<httplib::Client> Client() {
    auto client = std::make_unique<httplib::Client>("127.0.0.1", proxy_port_);
    client->set_connection_timeout(kWait);
    client->set_read_timeout(kWait);
    client->set_url_encode(false);  // paths and query strings go as the tests write them
    return client;
  }
  // The fake engine's streamed answer on `path`: one event, then the rest once release_ opens.
  void StreamOn(const std::string& path) {
    engine_.Post(path, [this](const httplib::Request&, httplib::Response& res) {
      res.set_header("X-Request-Id", "cmpl-42");
      res.set_chunked_content_provider(
          kEventStream, [this](size_t offset, httplib::DataSink& sink) {
            if (offset == 0) return sink.write(kFirstEvent, std::string(kFirstEvent).size());
            if (!release_.Wait()) return false;
            sink.write(kLastEvents, std::string(kLastEvents).size());
            sink.done();
            return true;
          });
    });
  }
  // Sends a streamed generation request on its own thread, its body into `received`.
  std::future<httplib::Result> StreamRequest(Received& received) {
    return std::async(std::launch::async, [this, &received] {
      httplib::Request req;
      req.method = "POST";
      req.path = "/v1/completions";
      // A client that accepts gzip must still get each event as it comes.
      req.headers = {{"Accept-Encoding", "gzip, deflate"}, {"Content-Type", "application/json"}};
      req.body = R"({"model":"llama","prompt":"Hi","stream":true})";
      req.content_receiver = [&received](const char* data, size_t length, uint64_t, uint64_t) {
        return received.Add(data, length);
      };
      return Client()->send(req);
    });
  }

  httplib::Server engine_;
  std::thread engine_thread_;
  int engine_port_ = 0;
  Gate release_;
  RecordingSignal signal_;
  std::unique_ptr<EngineProxy> proxy_;
  std::thread proxy_thread_;
  std::promise<void> served_;
  int proxy_port_ = 0;
};

TEST_F(EngineProxyTest, StreamsAGenerationAndSignalsItsFirstToken) {
  StreamOn("/v1/completions");
  Start();
  Received received;
  auto answer = StreamRequest(received);

  ASSERT_TRUE(received.WaitFor(kFirstEvent)) << "the first event did not come before the rest";
  EXPECT_EQ(received.body(), kFirstEvent);
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1) << "the first token left before FirstTokenLeft()";

  release_.Open();
  ASSERT_EQ(answer.wait_for(kWait), std::future_status::ready);
  httplib::Result result = answer.get();
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 200);
  EXPECT_EQ(result->get_header_value("Content-Type"), kEventStream);
  EXPECT_EQ(result->get_header_value("X-Request-Id"), "cmpl-42");
  EXPECT_FALSE(result->has_header("Content-Encoding"));
  EXPECT_EQ(received.body(), std::string(kFirstEvent) + kLastEvents);
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
  EXPECT_EQ(proxy_->counters().generation_requests, 1u);
}

TEST_F(EngineProxyTest, OtherRequestsPassThroughWithoutASignal) {
  engine_.Get("/metrics", [](const httplib::Request&, httplib::Response& res) {
    res.set_header("X-Engine", "fake");
    res.set_content("vllm:num_requests_waiting 0\n", "text/plain; version=0.0.4");
  });
  engine_.Post("/v1/embeddings", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 201;
    res.set_header("X-Engine", "fake");
    res.set_content("{\"echo\":" + req.body + "}", "application/json");
  });
  Start();
  auto client = Client();

  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "vllm:num_requests_waiting 0\n");
  EXPECT_EQ(metrics->get_header_value("X-Engine"), "fake");
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4");

  auto embeddings = client->Post("/v1/embeddings", "[1,2]", "application/json");
  ASSERT_TRUE(embeddings) << httplib::to_string(embeddings.error());
  EXPECT_EQ(embeddings->status, 201);
  EXPECT_EQ(embeddings->body, "{\"echo\":[1,2]}");
  EXPECT_EQ(embeddings->get_header_value("X-Engine"), "fake");

  auto missing = client->Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404) << "the engine's own 404";

  EXPECT_EQ(signal_.arrived(), 0);
  EXPECT_EQ(signal_.left(), 0);
  EXPECT_EQ(proxy_->counters().requests, 3u);
  EXPECT_EQ(proxy_->counters().generation_requests, 0u);
}

TEST_F(EngineProxyTest, TheEnginesOwnErrorPassesThroughAndTheSignalIsBalanced) {
  const std::string error = R"({"object":"error","message":"prompt too long","code":400})";
  engine_.Post("/v1/chat/completions", [&](const httplib::Request&, httplib::Response& res) {
    res.status = 400;
    res.set_content(error, "application/json");
  });
  Start();

  auto answer = Client()->Post("/v1/chat/completions", "{\"messages\":[]}", "application/json");
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  EXPECT_EQ(answer->status, 400);
  EXPECT_EQ(answer->body, error);
  EXPECT_EQ(answer->get_header_value("Content-Type"), "application/json");
  ASSERT_TRUE(signal_.WaitForLeft(1));
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
  EXPECT_EQ(proxy_->counters().upstream_failures, 0u) << "an answer is not a failure";
}

TEST_F(EngineProxyTest, AnEngineDownIsA502NamingItAndTheSignalIsBalanced) {
  // Nothing listens on port 1 (as in engine_metrics_test).
  StartProxy("http://127.0.0.1:1");

  auto answer = Client()->Post("/v1/completions", "{\"prompt\":\"Hi\"}", "application/json");
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  EXPECT_EQ(answer->status, 502);
  const auto body = nlohmann::json::parse(answer->body, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(body.contains("error")) << answer->body;
  EXPECT_NE(body["error"].get<std::string>().find("engine at http://127.0.0.1:1: cannot connect"),
            std::string::npos)
      << answer->body;
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
  EXPECT_EQ(proxy_->counters().upstream_failures, 1u);
  EXPECT_NE(proxy_->Metrics().find("headroom_engine_proxy_upstream_failures_total 1"),
            std::string::npos)
      << proxy_->Metrics();
}

TEST_F(EngineProxyTest, TheRequestReachesTheEngineUnchanged) {
  httplib::Request seen;
  engine_.Post("/v1/completions", [&](const httplib::Request& req, httplib::Response& res) {
    seen = req;
    res.set_content("{}", "application/json");
  });
  Start();
  const std::string prompt = R"({"model":"llama","prompt":"1 + 1 = ?","max_tokens":4})";
  const std::string target = "/v1/completions?api-version=2024-06-01&tag=a+b%20c";

  auto answer = Client()->Post(target, {{"Authorization", "Bearer sk-test-123"}, {"X-Trace", "t1"}},
                               prompt, "application/json");
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, target);
  EXPECT_EQ(seen.body, prompt);
  EXPECT_EQ(seen.get_header_value("Authorization"), "Bearer sk-test-123");
  EXPECT_EQ(seen.get_header_value("X-Trace"), "t1");
  EXPECT_EQ(seen.get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(seen.get_header_value("Host"), fmt::format("127.0.0.1:{}", engine_port_));
  EXPECT_EQ(seen.get_header_value("X-Forwarded-For"), "127.0.0.1");
  EXPECT_EQ(seen.get_header_value_count("Content-Length"), 1u);
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
}

TEST_F(EngineProxyTest, StopCutsAnOpenStreamAndBalancesTheSignal) {
  StreamOn("/v1/chat/completions");
  Start();
  Received received;
  auto answer = std::async(std::launch::async, [&] {
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = R"({"messages":[{"role":"user","content":"Hi"}],"stream":true})";
    req.content_receiver = [&](const char* data, size_t length, uint64_t, uint64_t) {
      return received.Add(data, length);
    };
    return Client()->send(req);
  });
  ASSERT_TRUE(received.WaitFor(kFirstEvent));

  proxy_->Stop();  // the engine still holds the stream open (release_ is shut)
  ASSERT_EQ(served_.get_future().wait_for(kWait), std::future_status::ready)
      << "Serve() did not return while a stream was open";
  ASSERT_EQ(answer.wait_for(kWait), std::future_status::ready);
  httplib::Result cut = answer.get();
  EXPECT_FALSE(cut && received.body().find("[DONE]") != std::string::npos)
      << "the stream should have been cut, not finished";
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
}

// Before the agent stops, the proxy drains: a new request is refused with a 503 (a load balancer
// sends it elsewhere) while the answer under way streams on to its end.
TEST_F(EngineProxyTest, ADrainRefusesNewRequestsAndLetsTheAnswersUnderWayFinish) {
  StreamOn("/v1/completions");
  Start();
  Received received;
  auto answer = StreamRequest(received);
  ASSERT_TRUE(received.WaitFor(kFirstEvent));
  EXPECT_EQ(proxy_->in_flight(), 1);

  proxy_->Drain();
  const auto refused = Client()->Post("/v1/completions", R"({"prompt":"Hi"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_NE(refused->body.find("draining"), std::string::npos) << refused->body;
  EXPECT_EQ(refused->get_header_value("Connection"), "close");
  EXPECT_EQ(proxy_->in_flight(), 1) << "the refused request is not under way";
  EXPECT_NE(proxy_->Metrics().find("headroom_engine_proxy_refused_draining_total 1"),
            std::string::npos)
      << proxy_->Metrics();

  release_.Open();
  ASSERT_EQ(answer.wait_for(kWait), std::future_status::ready);
  const httplib::Result done = answer.get();
  ASSERT_TRUE(done);
  EXPECT_EQ(done->status, 200);
  EXPECT_EQ(received.body(), std::string(kFirstEvent) + kLastEvents);
  const auto deadline = std::chrono::steady_clock::now() + kWait;
  while (proxy_->in_flight() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(proxy_->in_flight(), 0);
  EXPECT_EQ(signal_.arrived(), 1) << "a refused prompt is not signalled";
  EXPECT_EQ(signal_.left(), 1);
}

TEST_F(EngineProxyTest, AStreamTheEngineBreaksMidwayClosesTheClientsConnection) {
  engine_.Post("/v1/completions", [](const httplib::Request&, httplib::Response& res) {
    res.set_chunked_content_provider(kEventStream, [](size_t offset, httplib::DataSink& sink) {
      if (offset == 0) return sink.write(kFirstEvent, std::string(kFirstEvent).size());
      return false;  // the engine drops the connection without the last chunk
    });
  });
  Start();
  Received received;

  auto answer = StreamRequest(received);
  ASSERT_EQ(answer.wait_for(kWait), std::future_status::ready);
  httplib::Result cut = answer.get();
  EXPECT_FALSE(cut) << "a cut stream must not look complete to the client";
  EXPECT_EQ(received.body(), kFirstEvent);
  EXPECT_EQ(proxy_->counters().upstream_failures, 1u);
  ASSERT_TRUE(signal_.WaitForLeft(1));
  EXPECT_EQ(signal_.arrived(), 1);
  EXPECT_EQ(signal_.left(), 1);
}

TEST(EngineProxyCreateTest, ABadUpstreamUrlIsAnInvalidArgumentNamingIt) {
  RecordingSignal signal;
  for (const char* bad : {"127.0.0.1:8000", "ftp://127.0.0.1:8000", "http://", "http://:8000",
                          "http://127.0.0.1:99999", "http://127.0.0.1:port",
                          "http://127.0.0.1:8000/v1", "http://127.0.0.1:8000?x=1"}) {
    auto proxy = EngineProxy::Create({.upstream = bad}, &signal);
    ASSERT_FALSE(proxy) << bad;
    EXPECT_EQ(proxy.error().code(), core::Code::kInvalidArgument) << bad;
    EXPECT_NE(proxy.error().message().find(fmt::format("'{}'", bad)), std::string::npos)
        << proxy.error().message();
  }
  for (const char* good : {"http://127.0.0.1:8000", "http://127.0.0.1:8000/",
                           "https://vllm.internal", "http://[::1]:8000"}) {
    EXPECT_TRUE(EngineProxy::Create({.upstream = good}, &signal)) << good;
  }
}

}  // namespace
}  // namespace headroom::service
