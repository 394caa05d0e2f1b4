import CofferCore
import DBusKit
import Dispatch
import SystemKit

/// Tells which application is behind a bus connection, from the bus and the kernel, never from
/// anything the caller says: asks the bus which process opened the connection
/// (GetConnectionCredentials, without waiting), reads what the kernel says that process is
/// (`ProcessIdentity`, on a thread of its own), and remembers the answer per unique name until
/// `forget`.
///
/// ## Threads
/// `identify`, `forget`, `cachedCaller` and `executableDigest(of:then:)` are called on the
/// connection's loop thread (they trap on another thread while the loop runs), and their
/// completions run there. Nothing slow runs there: /proc is read and files are hashed on other
/// threads. The bus's answer needs the loop running.
///
/// ## What an identity is worth
/// A unique name is never reused on a bus, so an answer stays true for the connection it names
/// (the process is read once, at its first call: one that execs another program later stays
/// what it was). A process that cannot be read (it exited, its PID went to another process, /proc refused)
/// gets an error, never a guess. A sandboxed app (Flatpak, snap) cannot change its identity;
/// an unsandboxed program is named by its executable, which is only as strong as the
/// separation between programs of one user (which can trace one another, or preload code
/// into one another).
public final class CallerIdentifier: Sendable {
    /// How many callers are remembered by default; past it the one identified longest ago is dropped.
    public static let defaultCapacity = 4096

    /// Asks the bus for a connection's credentials; calls back on the loop thread.
    typealias CredentialsQuery = @Sendable (String, @escaping @Sendable (Result<ConnectionCredentials, DBusError>) -> Void) -> Void
    /// Reads a process's identity (off the loop thread).
    typealias ProcessReader = @Sendable (Int32) throws(ProcessIdentityError) -> ProcessIdentity
    /// Reads what anyone may read of a process (off the loop thread): for an unverified one.
    typealias StatReader = @Sendable (Int32) throws(ProcessIdentityError) -> ProcessStat

    private let connection: DBusConnection
    private let state: LoopOwned<State>
    private let askBus: CredentialsQuery
    private let readProcess: ProcessReader
    private let readStat: StatReader
    let digests: ExecutableDigests

    private static let procReads = DispatchQueue(label: "coffer.caller-identification", qos: .userInitiated)
    private static let hashing = DispatchQueue(label: "coffer.executable-digests", qos: .userInitiated)

    /// The callers known and the lookups under way, touched on the loop thread only.
    private final class State {
        var callers: BoundedCache<String, Caller>
        var lookups: [String: Lookup] = [:]
        init(capacity: Int) { callers = BoundedCache(capacity: capacity) }
    }

    /// One lookup under way, and everyone waiting for it.
    private final class Lookup {
        var waiting: [(Result<Caller, IdentificationError>) -> Void]
        /// `forget` was called meanwhile: the answer is given, not remembered.
        var forgotten = false
        init(_ first: @escaping (Result<Caller, IdentificationError>) -> Void) { waiting = [first] }
    }

    /// An identifier for callers on `connection`, remembering at most `capacity` of them.
    public convenience init(connection: DBusConnection, capacity: Int = CallerIdentifier.defaultCapacity) {
        self.init(connection: connection, capacity: capacity,
                  askBus: { [connection] name, completion in connection.connectionCredentials(of: name, completion: completion) },
                  readProcess: { pid throws(ProcessIdentityError) in try ProcessIdentity.read(processID: pid) })
    }

    /// The same, asking the bus and reading processes through the given functions (for tests).
    init(connection: DBusConnection, capacity: Int, askBus: @escaping CredentialsQuery,
         readProcess: @escaping ProcessReader,
         readStat: @escaping StatReader = { pid throws(ProcessIdentityError) in try ProcessStat.read(processID: pid) },
         digests: ExecutableDigests = ExecutableDigests()) {
        self.connection = connection
        self.state = LoopOwned(State(capacity: capacity), on: connection)
        self.askBus = askBus
        self.readProcess = readProcess
        self.readStat = readStat
        self.digests = digests
    }

    /// Identifies the caller with unique name `uniqueName` and calls `completion` with it:
    /// at once when it is known, else on the loop thread once the bus has answered and /proc
    /// was read. Requests for a name whose lookup is under way wait for that lookup.
    public func identify(_ uniqueName: String,
                         then completion: @escaping (Result<Caller, IdentificationError>) -> Void) {
        let state = self.state.value
        if let caller = state.callers[uniqueName] {
            completion(.success(caller))
            return
        }
        guard uniqueName.hasPrefix(":"), DBusNames.isValidBusName(uniqueName) else {
            completion(.failure(.notAUniqueName(uniqueName)))
            return
        }
        if let lookup = state.lookups[uniqueName] {
            lookup.waiting.append(completion)
            return
        }
        state.lookups[uniqueName] = Lookup(completion)
        askBus(uniqueName) { [self] answer in
            switch answer {
            case .failure(let error):
                finish(uniqueName, .failure(error.name == DBusError.Name.nameHasNoOwner
                    ? .gone(uniqueName: uniqueName) : .bus(uniqueName: uniqueName, error)))
            case .success(let credentials):
                guard let pid = credentials.processID else {
                    finish(uniqueName, .failure(.noProcess(uniqueName: uniqueName)))
                    return
                }
                Self.procReads.async { [self] in
                    let caller = read(uniqueName, processID: Int32(bitPattern: pid), unixUserID: credentials.unixUserID)
                    connection.post { self.finish(uniqueName, caller) }
                }
            }
        }
    }

    /// The caller `uniqueName` if it is known, without asking anything.
    public func cachedCaller(_ uniqueName: String) -> Caller? {
        state.value.callers[uniqueName]
    }

    /// Drops what is known of `uniqueName` (call it when the client leaves the bus); a lookup
    /// under way still answers those waiting for it, but is not remembered.
    public func forget(_ uniqueName: String) {
        let state = self.state.value
        state.callers.removeValue(forKey: uniqueName)
        state.lookups[uniqueName]?.forgotten = true
    }

    /// How many callers are remembered.
    public var cachedCount: Int { state.value.callers.count }

    /// Reads `caller.executableDigest` on another thread unless it is known, then calls
    /// `completion` with it on the loop thread (at once when it is known); afterwards
    /// `caller.executableDigest` answers without reading.
    public func executableDigest(of caller: Caller, then completion: @escaping ([UInt8]?) -> Void) {
        if let digest = caller.knownExecutableDigest {
            completion(digest)
            return
        }
        let completion = LoopOwned(completion, on: connection)
        Self.hashing.async { [connection] in
            let digest = caller.executableDigest
            connection.post { completion.value(digest) }
        }
    }

    /// What process `pid` is, as the caller `uniqueName` (off the loop thread): the application
    /// it runs; an unverified process when that cannot be read but the process runs.
    private func read(_ uniqueName: String, processID pid: Int32,
                      unixUserID: UInt32?) -> Result<Caller, IdentificationError> {
        let why: String
        do {
            let process = try readProcess(pid)
            if let application = Caller.application(of: process) {
                return .success(Caller(uniqueName: uniqueName, application: application, unixUserID: unixUserID,
                                       process: process, digests: digests))
            }
            why = "the path of its executable names no application: \(process.executable.path.debugDescription)"
        } catch .gone {
            return .failure(.gone(uniqueName: uniqueName))
        } catch .unreadable(_, let error) where error == .permissionDenied || error == .notPermitted {
            why = "its executable cannot be read (the process made itself non-dumpable, as ssh-agent and gpg-agent do, "
                + "or runs with other privileges)"
        } catch {
            why = error.description
        }
        do {
            let stat = try readStat(pid)
            return .success(Caller(uniqueName: uniqueName, unverified: stat, processID: pid, unixUserID: unixUserID,
                                   reason: why, digests: digests))
        } catch .gone {
            return .failure(.gone(uniqueName: uniqueName))
        } catch {
            return .failure(.unreadable(uniqueName: uniqueName, reason: "\(why); and \(error)"))
        }
    }

    /// Ends the lookup of `uniqueName`: remembers a caller found (unless forgotten meanwhile)
    /// and answers everyone waiting.
    private func finish(_ uniqueName: String, _ result: Result<Caller, IdentificationError>) {
        let state = self.state.value
        guard let lookup = state.lookups.removeValue(forKey: uniqueName) else { return }
        if case .success(let caller) = result, !lookup.forgotten {
            state.callers.insert(caller, for: uniqueName)
        }
        for completion in lookup.waiting { completion(result) }
    }
}

/// Why a caller could not be identified. No error ever comes with a guessed identity.
public enum IdentificationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The caller has left the bus, or its process has exited (or its PID is another
    /// process's by now).
    case gone(uniqueName: String)
    /// The name is not a connection's unique name (`:1.42`).
    case notAUniqueName(String)
    /// The bus does not say which process the connection belongs to.
    case noProcess(uniqueName: String)
    /// The process runs, but what it is cannot be read (`reason` says why).
    case unreadable(uniqueName: String, reason: String)
    /// The bus did not answer.
    case bus(uniqueName: String, DBusError)

    public var description: String {
        switch self {
        case .gone(let name): "\(name) is gone"
        case .notAUniqueName(let name): "\(name.debugDescription) is not a unique bus name"
        case .noProcess(let name): "the bus does not say which process \(name) is"
        case .unreadable(let name, let reason): "cannot tell which application \(name) is: \(reason)"
        case .bus(let name, let error): "cannot ask the bus who \(name) is: \(error)"
        }
    }
}
