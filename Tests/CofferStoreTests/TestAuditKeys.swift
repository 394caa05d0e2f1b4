import CofferCore
import CofferCrypto
import CofferStore

/// Audit keys for the collections a test logs events of, written as a collection writes its
/// own, and the log read back with the labels sealed to them opened.
struct TestAuditKeys {
    private var openers: [CollectionID: AuditOpener] = [:]

    init(directory: String, collections: [CollectionID]) throws {
        for id in collections {
            let privateKey = try X25519.newPrivateKey()
            try AuditKey.writeFile(directory, id, uuid: [UInt8](repeating: 0, count: 16), publicKey: try X25519.publicKey(of: privateKey))
            openers[id] = try AuditOpener(privateKey: privateKey)
        }
    }

    /// The log in `directory` in memory, ordered by time (events of one second in the order
    /// written), its labels opened (those that do not open stay nil).
    func read(_ directory: String) throws -> (events: [AuditEvent], skippedLines: Int, exists: Bool) {
        var events: [AuditEvent] = []
        let scan = try AuditLogFile.scan(directory: directory) { events.append($0) }
        events = events.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        return (events.map(opened), scan.skippedLines, scan.exists)
    }

    private func opened(_ event: AuditEvent) -> AuditEvent {
        guard let sealed = event.sealedLabel, let collection = event.collection, let opener = openers[collection] else { return event }
        var opened = event
        opened.label = opener.open(sealed, collection: collection, item: event.item, time: event.time)
        opened.sealedLabel = nil
        return opened
    }
}
