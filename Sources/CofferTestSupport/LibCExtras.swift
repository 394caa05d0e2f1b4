import Glibc

/// glibc functions Swift's Glibc module does not export (they need `_GNU_SOURCE`), looked up
/// once at run time.
enum LibCExtras {
    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    private static func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)   // RTLD_DEFAULT
    }

    /// `pipe2(fds, O_CLOEXEC)`: both ends close-on-exec atomically, so no concurrently spawned
    /// child inherits them (which would keep our pipes from reaching EOF).
    static func cloexecPipe() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        if let sym = symbol("pipe2") {
            let pipe2 = unsafeBitCast(sym, to: Pipe2.self)
            guard pipe2(&fds, O_CLOEXEC) == 0 else { throw ChildProcessError.system("pipe2", errno) }
        } else {
            guard pipe(&fds) == 0 else { throw ChildProcessError.system("pipe", errno) }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        return (fds[0], fds[1])
    }

    /// Adds "close every descriptor >= `lowest`" to spawn file actions, if glibc has it (2.34+).
    static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ lowest: Int32) {
        guard let sym = symbol("posix_spawn_file_actions_addclosefrom_np") else { return }
        _ = unsafeBitCast(sym, to: AddCloseFrom.self)(actions, lowest)
    }

    /// Adds "change directory to `path`" to spawn file actions (glibc 2.29+). False if unavailable.
    static func addChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Bool {
        guard let sym = symbol("posix_spawn_file_actions_addchdir_np") else { return false }
        return unsafeBitCast(sym, to: AddChdir.self)(actions, path) == 0
    }
}
