import CofferCore
import DBusKit
import Synchronization
import SystemKit

/// Where the moments to lock come from: logind on the system bus (a session of this user
/// locks, the system prepares to sleep, the user's last session ends) and the screensaver on
/// the session bus (`ActiveChanged(true)` of org.freedesktop.ScreenSaver or
/// org.gnome.ScreenSaver). Each is handed to the server's loop as an `AutoLock.Trigger`.
///
/// Signals are believed only from the owner of the name they claim to come from
/// (org.freedesktop.login1, org.freedesktop.ScreenSaver, org.gnome.ScreenSaver).
/// Before sleep, a delay inhibitor (logind's `Inhibit("sleep", …, "delay")`) holds the system
/// until the collections are locked.
public final class LockTriggers: Sendable {
    static let logind = "org.freedesktop.login1"
    static let managerPath: ObjectPath = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"
    static let session = "org.freedesktop.login1.Session"
    static let screenSavers = ["org.freedesktop.ScreenSaver", "org.gnome.ScreenSaver"]

    private let server: SecretServer
    private let system: DBusConnection?
    private let userID = ProcessControl.userID
    /// This user's logind sessions (id → path), on the system connection's loop thread.
    private let sessions = Mutex<[String: ObjectPath]>([:])
    /// The delay inhibitor held while the system is awake (closing it lets sleep go on), and
    /// whether the system is going to sleep.
    private let inhibitor = Mutex<(held: UnixFileDescriptor?, sleeping: Bool)>((nil, false))

    /// - system: a connection to the system bus whose loop runs on its own thread (nil: none,
    ///   only the screensaver is watched).
    public init(server: SecretServer, system: DBusConnection?) {
        self.server = server
        self.system = system
    }

    /// Subscribes to the signals and takes the sleep inhibitor.
    public func start() throws(DBusError) {
        for interface in Self.screenSavers {
            let rule = SignalRule(interface: interface, member: "ActiveChanged")
            try server.connection.addMatch(rule.matchRule)
            _ = server.connection.addSignalHandler(rule) { [weak self] message in
                guard let self, (try? message.arguments())?.first?.bool == true, let sender = message.sender else { return }
                // Only the screensaver itself: anyone else could close the user's dialogs at will.
                server.connection.nameOwner(interface) { [server] owner in
                    guard (try? owner.get()) == sender else {
                        return server.log("ignored ActiveChanged from \(sender), which does not own \(interface)")
                    }
                    server.lock(on: .screenLocked(by: interface))
                }
            }
        }
        guard let system else { return }
        let rules: [(SignalRule, @Sendable (DBusMessage, [DBusValue]) -> Void)] = [
            (SignalRule(interface: Self.session, member: "Lock"), { [weak self] message, _ in self?.sessionLocked(message.path) }),
            (SignalRule(interface: Self.manager, member: "PrepareForSleep", path: Self.managerPath),
             { [weak self] _, arguments in self?.prepareForSleep(arguments.first?.bool ?? false) }),
            (SignalRule(interface: Self.manager, member: "SessionNew", path: Self.managerPath),
             { [weak self] _, arguments in self?.sessionNew(arguments) }),
            (SignalRule(interface: Self.manager, member: "SessionRemoved", path: Self.managerPath),
             { [weak self] _, arguments in self?.sessionRemoved(arguments.first?.string) }),
        ]
        for (rule, handler) in rules {
            try system.addMatch(rule.matchRule)
            _ = system.addSignalHandler(rule) { [weak self] message in
                guard let self, let sender = message.sender, let arguments = try? message.arguments() else { return }
                fromLogind(sender, rule.member) { handler(message, arguments) }
            }
        }
        system.post { [self] in
            listSessions()
            takeInhibitor()
        }
    }

    /// Runs `body` (on the system loop) if `sender` owns org.freedesktop.login1.
    private func fromLogind(_ sender: String, _ member: String?, _ body: @escaping @Sendable () -> Void) {
        system?.nameOwner(Self.logind) { [server] result in
            guard (try? result.get()) == sender else {
                return server.log("ignored \(member ?? "a signal") from \(sender), which does not own \(Self.logind)")
            }
            body()
        }
    }

    private func call(_ path: ObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
                      _ completion: @escaping @Sendable (Result<[DBusValue], DBusError>) -> Void) {
        guard let system else { return }
        do {
            let message = try DBusMessage.methodCall(destination: Self.logind, path: path, interface: interface,
                                                     member: member, arguments: arguments)
            system.callAsync(message, timeout: .seconds(10)) { result in
                completion(result.flatMap { reply in Result { () throws(DBusError) in try reply.arguments() } })
            }
        } catch {
            completion(.failure(error))
        }
    }

    // MARK: Sessions

    private func listSessions() {
        call(Self.managerPath, Self.manager, "ListSessions") { [self] result in
            switch result {
            case .success(let arguments):
                // a(susso): id, uid, user name, seat, path.
                for case let fields? in (arguments.first?.arrayElements ?? []).map(\.structureFields) where fields.count == 5 {
                    if fields[1].uint32 == userID, let id = fields[0].string, let path = fields[4].objectPath { sessions.withLock { $0[id] = path } }
                }
            case .failure(let error):
                server.log("logind cannot be asked for this user's sessions (\(error.message)): the end of the last session will not lock collections")
            }
        }
    }

    private func sessionNew(_ arguments: [DBusValue]) {
        guard arguments.count == 2, let id = arguments[0].string, let path = arguments[1].objectPath else { return }
        ownedByThisUser(path) { [self] ours in
            guard ours else { return }
            let count = sessions.withLock { sessions in
                sessions[id] = path
                return sessions.count
            }
            server.log("logind session \(id) of this user began (\(count) now)")
        }
    }

    private func sessionRemoved(_ id: String?) {
        guard let id, let left = sessions.withLock({ $0.removeValue(forKey: id) == nil ? nil : $0.count }) else { return }
        guard left == 0 else { return server.log("logind session \(id) of this user ended (\(left) left)") }
        toServer(.sessionEnded)
    }

    private func sessionLocked(_ path: ObjectPath?) {
        guard let path else { return }
        if sessions.withLock({ $0.values.contains(path) }) { return toServer(.screenLocked(by: "logind")) }
        ownedByThisUser(path) { [self] ours in
            guard ours else { return server.log("ignored the Lock of logind session \(path.rawValue), which is not this user's") }
            toServer(.screenLocked(by: "logind"))
        }
    }

    /// Whether the logind session at `path` is this user's (its `User` property).
    private func ownedByThisUser(_ path: ObjectPath, _ answer: @escaping @Sendable (Bool) -> Void) {
        call(path, "org.freedesktop.DBus.Properties", "Get", [.string(Self.session), .string("User")]) { [userID] result in
            let uid = (try? result.get())?.first?.variantValue?.structureFields?.first?.uint32
            answer(uid == userID)
        }
    }

    // MARK: Sleep

    private func prepareForSleep(_ starting: Bool) {
        inhibitor.withLock { $0.sleeping = starting }
        guard starting else { return takeInhibitor() }
        server.connection.post { [self] in
            server.lock(on: .sleep)
            // Locked (keys wiped): the system may sleep now. Awake again meanwhile (this came
            // late): a new inhibitor, since the one taken on waking may be the one closed here.
            let awake = inhibitor.withLock { state -> Bool in
                state.held?.close()
                state.held = nil
                return !state.sleeping
            }
            if awake { system?.post { [self] in takeInhibitor() } }
        }
    }

    private func takeInhibitor() {
        guard inhibitor.withLock({ $0.held == nil && !$0.sleeping }) else { return }
        let arguments: [DBusValue] = [.string("sleep"), .string("Coffer"), .string("Lock collections before the system sleeps"), .string("delay")]
        call(Self.managerPath, Self.manager, "Inhibit", arguments) { [self] result in
            guard case .unixFD(let fd)? = (try? result.get())?.first else { return }
            inhibitor.withLock { state in
                if state.held == nil && !state.sleeping { state.held = fd } else { fd.close() }
            }
        }
    }

    private func toServer(_ trigger: AutoLock.Trigger) {
        server.connection.post { [server] in server.lock(on: trigger) }
    }
}
