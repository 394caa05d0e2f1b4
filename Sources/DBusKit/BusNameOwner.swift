internal import SystemKit

/// Who owns a bus name: the connection's unique name, and where the bus can tell, its process
/// and the executable that process runs.
public struct BusNameOwner: Sendable, CustomStringConvertible {
    public let uniqueName: String
    public let processID: UInt32?
    /// `/proc/PID/exe` of the process (nil when the bus gives no PID or it cannot be read).
    public let executable: String?

    /// The owner of `name` on `connection`, or nil when it has none.
    public init?(of name: String, on connection: DBusConnection) {
        guard let owner = try? connection.nameOwner(name) else { return nil }
        uniqueName = owner
        processID = try? connection.unixProcessID(of: owner)
        executable = processID.flatMap { ProcessControl.executable(of: Int32(bitPattern: $0)) }
    }

    /// `:1.5 (PID 123, /usr/bin/gnome-keyring-daemon)`, or less where less is known.
    public var description: String {
        var details: [String] = []
        if let processID { details.append("PID \(processID)") }
        if let executable { details.append(executable) }
        return details.isEmpty ? uniqueName : "\(uniqueName) (\(details.joined(separator: ", ")))"
    }
}
