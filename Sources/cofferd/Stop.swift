import DBusKit
import FoundationEssentials
import Glibc
import SecretServiceProtocol
import SystemKit

/// `cofferd --stop`: stops the cofferd serving this bus (SIGTERM: it finishes what it was
/// doing; every change it acknowledged is already on disk) and waits until it has let go of
/// the name.
enum Stop {
    /// How long to wait for the name to be released.
    static let patience: Duration = .seconds(10)

    static func stopServingDaemon(on connection: DBusConnection, log: (String) -> Void) throws {
        guard let owner = BusNameOwner(of: Startup.busName, on: connection) else {
            throw StartupError("no Secret Service serves this session bus, so there is nothing to stop", status: ExitStatus.notRunning)
        }
        // cofferd hides its executable from other processes (it is non-dumpable): it tells what
        // it is over the bus (org.coffer.Daemon). Any process of the user may send it SIGTERM
        // anyway; the check keeps --stop from stopping another provider by mistake.
        let tellsItIsCofferd = (try? CofferDaemonDescription.read(from: owner.uniqueName, on: connection)) != nil
        guard let pid = owner.processID, tellsItIsCofferd || owner.programName == "cofferd" else {
            throw StartupError("\(Startup.busName) is served by \(owner), which is not cofferd; cofferd --stop stops only cofferd",
                               status: ExitStatus.notRunning)
        }
        do {
            try ProcessControl.send(signal: SIGTERM, to: pid_t(bitPattern: pid))
        } catch {
            throw StartupError("cannot stop cofferd \(owner): \(error.reason)")
        }
        let deadline = ContinuousClock.now + patience
        while (try? connection.nameOwner(Startup.busName)) == owner.uniqueName {
            guard ContinuousClock.now < deadline else {
                throw StartupError("cofferd \(owner) was asked to stop but still serves after \(patience); try again, or kill -KILL \(pid)")
            }
            usleep(20_000)
        }
        log("stopped cofferd \(owner)")
    }
}
