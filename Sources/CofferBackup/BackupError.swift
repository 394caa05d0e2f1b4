/// Why a backup could not be read or written.
public enum BackupError: Error, Equatable, CustomStringConvertible {
    case notABackup
    case unsupportedVersion(UInt32)
    /// The passphrase does not open it, or it was altered (the two cannot be told apart).
    case wrongPassphrase
    /// It opened, but what it holds breaks the format (a writer's bug, or a forgery by someone
    /// who knows the passphrase).
    case damaged(String)
    /// `BackupFile.write` was given a backup no reader would accept (the caller's bug).
    case inconsistent(String)

    public var description: String {
        switch self {
        case .notABackup: "this is not a Coffer backup"
        case .unsupportedVersion(let version):
            "this backup has format version \(version); this coffer reads versions \(BackupFile.readableVersions.lowerBound) to \(BackupFile.readableVersions.upperBound) (use a newer coffer)"
        case .wrongPassphrase: "the passphrase does not open this backup (or the file was altered)"
        case .damaged(let what): "the backup is damaged: \(what)"
        case .inconsistent(let what): "this backup cannot be written: \(what)"
        }
    }
}
