import CofferCore
import FoundationEssentials
import Synchronization
import SystemKit

/// `coffer.conf` in `$XDG_CONFIG_HOME/coffer/` (else `~/.config/coffer/`): the settings of
/// `LockConfiguration`, read by cofferd (again whenever the file changes) and changed by
/// `coffer policy`. Written whole and renamed into place (0600), so a reader never sees half.
public final class LockConfigurationFile: Sendable {
    public let path: String
    private let cache = Mutex<(FileStatus?, LockConfiguration)?>(nil)

    /// Larger files are not read (the settings of a thousand collections fit in 100 KiB).
    static let maximumBytes = 1 << 20

    public init(path: String) {
        self.path = path
    }

    /// Where the file is for a user with `environment`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/coffer/coffer.conf" }
        let home = environment["HOME"] ?? FileSystem.homeDirectoryOfThisUser()
        return home + "/.config/coffer/coffer.conf"
    }

    /// The settings as the file says now (none: an empty configuration). Unchanged files are
    /// not read again.
    public func read() throws(CofferError) -> LockConfiguration {
        let status: FileStatus?
        do {
            status = try FileStatus.of(path)
        } catch {
            guard error == .noSuchFile else { throw .io("cannot read \(path): \(error.reason)") }
            status = nil
        }
        if let (seen, configuration) = cache.withLock({ $0 }), seen == status { return configuration }
        let configuration = try status.map { status throws(CofferError) in try load(status) } ?? LockConfiguration()
        cache.withLock { $0 = (status, configuration) }
        return configuration
    }

    private func load(_ status: FileStatus) throws(CofferError) -> LockConfiguration {
        guard status.kind == .regular else { throw .io("\(path) is not a regular file; move it away") }
        guard status.size <= Self.maximumBytes else { throw .io("\(path) is larger than \(Self.maximumBytes) bytes; it is not read") }
        do {
            let bytes = try FileSystem.contents(of: path)
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CofferError.io("\(path) is not UTF-8 text; it is not read")
            }
            return LockConfiguration(text: text)
        } catch let error as CofferError {
            throw error
        } catch let error as Errno {
            throw .io("cannot read \(path): \(error.reason)")
        } catch {
            throw .io("cannot read \(path): \(error)")
        }
    }

    /// Replaces the file with `configuration` (creating its directory, 0700, if needed).
    public func write(_ configuration: LockConfiguration) throws(CofferError) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        do throws(Errno) {
            if !directory.isEmpty { try FileSystem.makeDirectories(directory, permissions: 0o700) }
            try FileSystem.replace(path, with: Array(configuration.text.utf8), permissions: 0o600)
        } catch {
            throw .io("cannot write \(path): \(error.reason)")
        }
    }
}
