import CofferCore

/// The application behind a bus client, as access decisions need it.
struct ClientApplication: Sendable {
    let application: Application
    /// The SHA-256 of its executable file, for grants bound to one binary (nil: not an
    /// executable, or it cannot be read).
    let executableDigest: @Sendable () -> [UInt8]?
}

/// Tells which application a bus client (a unique name) belongs to, from the bus and the
/// kernel. Used on the loop thread; answers there.
protocol ClientIdentifying: AnyObject {
    /// Calls `then` (at once when the client is known) with its application, or why it cannot
    /// be told (the process is gone, `/proc` cannot be read).
    func identify(_ uniqueName: String, then: @escaping (Result<ClientApplication, any Error>) -> Void)
    /// Drops what is known of a client that left the bus.
    func forget(_ uniqueName: String)
}
