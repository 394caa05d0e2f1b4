import CofferCore
import SecretServiceProtocol
import SystemKit

/// Finding 8: collections whose items no application owns (imported, made before Coffer
/// recorded creators, or by a program it could not verify) under the policy `ask`, served by a
/// cofferd that cannot show a dialog: every application is refused those secrets. Seen through
/// cofferd, for its unlocked collections (the rules are encrypted with each collection).
enum AccessCheck {
    static func findings(bus: BusState) -> [Finding] {
        guard let daemon = bus.cofferd?.daemon, let collections = bus.cofferd?.collections,
              PinentryChoice(program: daemon.pinentryProgram, environment: daemon.pinentryEnvironment).path == nil else { return [] }
        return collections.sorted { $0.key < $1.key }.compactMap { id, summary in
            guard summary.policy == AccessPolicy.ask.rawValue, summary.itemsWithoutOwner > 0 else { return nil }
            let items = summary.itemsWithoutOwner == 1 ? "1 item" : "\(summary.itemsWithoutOwner) items"
            return Finding("access", .warning,
                           "collection '\(id)' holds \(items) that no application owns (imported, made before Coffer recorded "
                               + "creators, or made by a program it could not verify); its policy is ask, and cofferd cannot show "
                               + "a dialog, so every application is refused their secrets",
                           fix: "let every program read them: coffer policy open --collection \(id); or grant the programs that "
                               + "need them: coffer access grant /usr/bin/PROGRAM --collection \(id)")
        }
    }
}
