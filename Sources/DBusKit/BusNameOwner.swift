internal import SystemKit

/// Who owns a bus name: the connection's unique name, and where the bus can tell, its process:
/// the executable that process runs, or, for a process that hides it (non-dumpable, as cofferd
/// is), the command name it gives itself.
public struct BusNameOwner: Sendable, CustomStringConvertible {
    public let uniqueName: String
    public let processID: UInt32?
    /// `/proc/PID/exe` of the process (nil when the bus gives no PID or it cannot be read).
    public let executable: String?
    /// The process's command name (`/proc/PID/comm`, readable for every process of the user);
    /// nil when the bus gives no PID or the process is gone.
    public let commandName: String?

    /// The owner of `name` on `connection`, or nil when it has none.
    public init?(of name: String, on connection: DBusConnection) {
        guard let owner = try? connection.nameOwner(name) else { return nil }
        uniqueName = owner
        processID = try? connection.unixProcessID(of: owner)
        executable = processID.flatMap { ProcessControl.executable(of: Int32(bitPattern: $0)) }
        commandName = processID.flatMap { try? ProcessStat.read(processID: Int32(bitPattern: $0)).commandName }
    }

    /// The program's name: its executable's file name, else its command name.
    public var programName: String? {
        executable.flatMap { $0.split(separator: "/").last.map(String.init) } ?? commandName
    }

    /// `:1.5 (PID 123, /usr/bin/gnome-keyring-daemon)`, or for a process that hides its
    /// executable `:1.7 (PID 124, cofferd)`, or less where less is known.
    public var description: String {
        var details: [String] = []
        if let processID { details.append("PID \(processID)") }
        if let program = executable ?? commandName { details.append(program) }
        return details.isEmpty ? uniqueName : "\(uniqueName) (\(details.joined(separator: ", ")))"
    }
}
