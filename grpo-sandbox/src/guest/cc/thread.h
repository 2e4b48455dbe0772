// <thread> for wasm32-wasi (zig 0.17.0's libc++, built without threads): that libc++ declares
// neither std::thread nor std::this_thread, and a wasm32-wasi program has one thread only.
// This header gives what a single-threaded program can use: std::this_thread::sleep_for,
// sleep_until (over nanosleep, so the sandbox's limits still stop them), yield and get_id;
// std::thread::id; std::thread::hardware_concurrency() (1). Starting a std::thread or
// std::jthread is a compile error that says why, never a hang.
#ifndef GRPO_THREAD_SHIM
#define GRPO_THREAD_SHIM
#include_next <thread>
#include <__config>
#include <__verbose_abort>
#include <chrono>
#include <cstddef>
#include <ctime>
#include <cerrno>
#include <compare>
#include <functional>
#include <iosfwd>

#if !_LIBCPP_HAS_THREADS
_LIBCPP_BEGIN_NAMESPACE_STD

template <class... _Tp>
inline constexpr bool __grpo_no_threads = false;

class thread {
public:
  class id {
    unsigned long __v_ = 0;
    constexpr explicit id(unsigned long __v) noexcept : __v_(__v) {}
    friend class thread;

  public:
    constexpr id() noexcept = default;
    friend constexpr bool operator==(id __a, id __b) noexcept { return __a.__v_ == __b.__v_; }
#  if _LIBCPP_STD_VER >= 20
    friend constexpr strong_ordering operator<=>(id __a, id __b) noexcept {
      return __a.__v_ <=> __b.__v_;
    }
#  else
    friend constexpr bool operator!=(id __a, id __b) noexcept { return __a.__v_ != __b.__v_; }
    friend constexpr bool operator<(id __a, id __b) noexcept { return __a.__v_ < __b.__v_; }
#  endif
    template <class _CharT, class _Traits>
    friend basic_ostream<_CharT, _Traits>& operator<<(basic_ostream<_CharT, _Traits>& __os, id __i) {
      return __os << __i.__v_;
    }
    friend struct hash<id>;
  };
  using native_handle_type = unsigned long;

  thread() noexcept = default;
  template <class _Fp, class... _Args>
  explicit thread(_Fp&&, _Args&&...) {
    static_assert(__grpo_no_threads<_Fp, _Args...>,
                  "std::thread cannot start a thread here: the program runs as single-threaded "
                  "WebAssembly (wasm32-wasi), which has no threads; do the work in the calling "
                  "thread");
  }
  thread(const thread&) = delete;
  thread& operator=(const thread&) = delete;
  thread(thread&&) noexcept = default;
  thread& operator=(thread&&) noexcept = default;

  // No thread can be started, so none is ever joinable (a join is a usage error, as natively).
  bool joinable() const noexcept { return false; }
  id get_id() const noexcept { return id(); }
  native_handle_type native_handle() noexcept { return 0; }
  void join() { __libcpp_verbose_abort("std::thread::join: no thread was started (wasm32-wasi has none)\n"); }
  void detach() { __libcpp_verbose_abort("std::thread::detach: no thread was started (wasm32-wasi has none)\n"); }
  void swap(thread&) noexcept {}
  static unsigned hardware_concurrency() noexcept { return 1; }
  // The one thread's id (not the default id, which means "no thread").
  static id __main_id() noexcept { return id(1); }
};

inline void swap(thread&, thread&) noexcept {}

template <>
struct hash<thread::id> {
  size_t operator()(thread::id __i) const noexcept { return hash<unsigned long>()(__i.__v_); }
};

#  if _LIBCPP_STD_VER >= 20
class jthread {
public:
  using id = thread::id;
  jthread() noexcept = default;
  template <class _Fp, class... _Args>
  explicit jthread(_Fp&&, _Args&&...) {
    static_assert(__grpo_no_threads<_Fp, _Args...>,
                  "std::jthread cannot start a thread here: the program runs as single-threaded "
                  "WebAssembly (wasm32-wasi), which has no threads; do the work in the calling "
                  "thread");
  }
  bool joinable() const noexcept { return false; }
  id get_id() const noexcept { return id(); }
  static unsigned hardware_concurrency() noexcept { return 1; }
};
#  endif

namespace this_thread {
inline thread::id get_id() noexcept { return thread::__main_id(); }

inline void yield() noexcept {}

template <class _Rep, class _Period>
void sleep_for(const chrono::duration<_Rep, _Period>& __d) {
  double __s = chrono::duration<double>(__d).count();
  if (!(__s > 0))
    return;
  if (__s > 1e9) // about 31 years: beyond any limit, and within time_t
    __s = 1e9;
  timespec __ts;
  __ts.tv_sec = static_cast<time_t>(__s);
  __ts.tv_nsec = static_cast<long>((__s - static_cast<double>(__ts.tv_sec)) * 1e9);
  while (nanosleep(&__ts, &__ts) == -1 && errno == EINTR) {
  }
}

template <class _Clock, class _Duration>
void sleep_until(const chrono::time_point<_Clock, _Duration>& __t) {
  for (auto __now = _Clock::now(); __now < __t; __now = _Clock::now())
    this_thread::sleep_for(__t - __now);
}
} // namespace this_thread

_LIBCPP_END_NAMESPACE_STD
#endif // !_LIBCPP_HAS_THREADS
#endif // GRPO_THREAD_SHIM
