// Clang thread-safety annotations (no-ops elsewhere), so locking is checked by the compiler in
// the clang-tsa build. Header only.
#ifndef HEADROOM_CORE_THREAD_ANNOTATIONS_H_
#define HEADROOM_CORE_THREAD_ANNOTATIONS_H_

#include <mutex>

#if defined(__clang__)
#define HEADROOM_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define HEADROOM_THREAD_ANNOTATION_(x)
#endif

#define GUARDED_BY(x) HEADROOM_THREAD_ANNOTATION_(guarded_by(x))
#define REQUIRES(...) HEADROOM_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) HEADROOM_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define CAPABILITY(x) HEADROOM_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY HEADROOM_THREAD_ANNOTATION_(scoped_lockable)
#define ACQUIRE(...) HEADROOM_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define RELEASE(...) HEADROOM_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))

namespace headroom::core {

// std::mutex with the capability attribute, so GUARDED_BY(mu_) is checked.
class CAPABILITY("mutex") Mutex {
 public:
  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  std::mutex mu_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_THREAD_ANNOTATIONS_H_
