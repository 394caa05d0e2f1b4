import DBusKit
import Dispatch
import FoundationEssentials
import Glibc
import SystemKit

/// Clean exits: on SIGTERM or SIGINT, and when another daemon takes the bus name over. Every
/// change was already durable when it was acknowledged, so stopping the loop is all it takes.
enum Shutdown {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func install(on connection: DBusConnection, log: @escaping @Sendable (String) -> Void) {
        for number in [SIGTERM, SIGINT] {
            ProcessControl.ignore(signal: number)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                log("received signal \(number), stopping")
                connection.stop()
            }
            // The source is registered asynchronously; until then the signal is ignored and
            // lost. Wait for it, so that every signal sent once we serve stops us.
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.resume()
            _ = registered.wait(timeout: .now() + 5)
            sources.append(source)
        }
        _ = connection.onNameLost { name in
            log("lost \(name) to another Secret Service, stopping")
            connection.stop()
        }
    }
}
