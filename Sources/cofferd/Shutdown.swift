import DBusKit
import Dispatch
import Foundation

/// Clean exits: on SIGTERM or SIGINT, and when another daemon takes the bus name over. Every
/// change was already durable when it was acknowledged, so stopping the loop is all it takes.
enum Shutdown {
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    static func install(on connection: DBusConnection, log: @escaping @Sendable (String) -> Void) {
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                log("received signal \(number), stopping")
                connection.stop()
            }
            source.resume()
            sources.append(source)
        }
        _ = connection.onNameLost { name in
            log("lost \(name) to another Secret Service, stopping")
            connection.stop()
        }
    }
}
