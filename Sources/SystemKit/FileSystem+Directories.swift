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
        while true {
            errno = 0
            guard let entry = readdir(directory) else {
                if errno != 0 { throw Errno(errno, operation: "readdir \(path)") }
                return names
            }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
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
        var buffer = [CChar](repeating: 0, count: 4096)
        return buffer.withUnsafeMutableBufferPointer { strings in
            var record = passwd()
            var found: UnsafeMutablePointer<passwd>?
            guard let storage = strings.baseAddress, getpwuid_r(getuid(), &record, storage, strings.count, &found) == 0,
                  found != nil, let home = record.pw_dir else { return "/" }
            return String(cString: home)
        }
    }
}
