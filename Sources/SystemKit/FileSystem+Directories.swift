import CProcess
#if canImport(Glibc)
import Glibc
#endif

/// Directories, and where the user's home is, without Foundation (which the daemon does not
/// link: its ICU alone would be most of its memory).
extension FileSystem {
    /// The names in directory `path` (without `.` and `..`), in no particular order.
    public static func names(in path: String) throws(Errno) -> [String] {
        guard let directory = opendir(path) else { throw Errno(errno, operation: "opendir \(path)") }
        defer { closedir(directory) }
        var names: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)   // d_name's size on Linux
        while true {
            switch cprocess_next_entry_name(directory, &buffer, buffer.count) {
            case 0: return names
            case 1:
                let name = Self.string(fromNUL: buffer)
                if name != "." && name != ".." { names.append(name) }
            default: throw Errno(errno, operation: "readdir \(path)")
            }
        }
    }

    /// The text of a NUL-terminated C string in `buffer`.
    private static func string(fromNUL buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Creates directory `path` and any missing parents with `permissions` (existing ones are
    /// left as they are), as `mkdir -p` does.
    public static func makeDirectories(_ path: String, permissions: UInt32) throws(Errno) {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode_t(permissions)) != 0 && errno != EEXIST {
                throw Errno(errno, operation: "mkdir \(prefix)")
            }
        }
        guard (try? FileStatus.of(path))?.kind == .directory else { throw Errno(ENOTDIR, operation: "mkdir \(path)") }
    }

    /// The home directory of the user this process runs as, from the password database (for
    /// when `HOME` is not set), or `/` if it has none.
    public static func homeDirectoryOfThisUser() -> String {
        var home = [CChar](repeating: 0, count: 4096)
        guard cprocess_home_directory(getuid(), &home, home.count) == 0 else { return "/" }
        return string(fromNUL: home)
    }
}
