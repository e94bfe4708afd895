#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads for `--jobs`, started with SIGINT and SIGTERM blocked, so that those signals are always delivered to
/// the reading thread: it is the one that may sit in read(2) on a quiet pipe and must see EINTR at once.
struct WorkerThreads {
    private var threads: [pthread_t] = []
    /// The stack size of each worker: the main thread's usual 8 MiB (only the pages touched are used), whatever
    /// `ulimit -s` says.
    static let stackSize = 8 << 20

    var count: Int { threads.count }

    /// Starts up to `count` threads running `body`; returns the errno of the first thread that could not start
    /// (the threads started so far keep running), or nil.
    mutating func start(_ count: Int, _ body: @escaping @Sendable () -> Void) -> Int32? {
        var blocked = sigset_t(), previous = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &blocked, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, Self.stackSize)
        for _ in 0..<count {
            let context = Unmanaged.passRetained(Body(body)).toOpaque()
            var thread = pthread_t()
            let status = pthread_create(&thread, &attributes, { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
            guard status == 0 else {
                Unmanaged<Body>.fromOpaque(context).release()
                return status
            }
            threads.append(thread)
        }
        return nil
    }

    /// Lets the threads run on their own: nobody waits for them, and each frees itself when it returns.
    mutating func detach() {
        for thread in threads { pthread_detach(thread) }
        threads.removeAll()
    }

    /// Waits for every thread to return.
    mutating func join() {
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
