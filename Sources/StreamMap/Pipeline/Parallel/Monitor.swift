#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex and one condition variable, for the state the pipeline's threads share: `withLock` around every read
/// and write of that state; inside it, `wait()` until another thread changes it and calls `broadcast()`.
final class Monitor: @unchecked Sendable {
    // @unchecked: pthread objects, used only through their own functions.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the mutex held.
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Inside `withLock`: releases the mutex until a `broadcast` (or a spurious wake-up: wait in a loop that tests
    /// the state), then holds it again.
    func wait() { pthread_cond_wait(changed, mutex) }

    /// `wait()`, for at most `milliseconds`.
    func wait(milliseconds: Int) {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_nsec += milliseconds % 1000 * 1_000_000
        deadline.tv_sec += milliseconds / 1000 + deadline.tv_nsec / 1_000_000_000
        deadline.tv_nsec %= 1_000_000_000
        pthread_cond_timedwait(changed, mutex, &deadline)
    }

    /// Wakes every thread in `wait()`.
    func broadcast() { pthread_cond_broadcast(changed) }
}
