import CofferCore
import DBusKit

extension AccessGate {
    /// Asks the user about `request` for `references` (one dialog per collection), on the
    /// dialog queue; answers on the loop thread with the items allowed once and those denied.
    /// "Always allow" is stored as a grant per item (for reading, or for changing) before
    /// answering.
    func ask(_ consent: any ConsentAsker, _ request: AccessRequest, about references: [ItemReference], for client: String,
             as identified: Caller,
             then: @escaping @Sendable (_ allowedOnce: Set<ItemReference>, _ denied: Set<ItemReference>) -> Void) {
        let keychain = server.keychain
        let connection = server.connection
        let log = server.log
        let audit = self.audit
        let byCollection = Dictionary(grouping: references, by: \.collection)
        Prompt.dialogs.async { [self] in
            var allowedOnce: Set<ItemReference> = []
            var refused: Set<ItemReference> = []
            for (collection, items) in byCollection.sorted(by: { $0.key < $1.key }) {
                // Its client left while it waited: nobody is there to read the answer.
                guard !departed.withLock({ $0.contains(client) }) else { break }
                // An earlier dialog may have answered for these already ("Always allow").
                let decisions = keychain.decide(request.action, of: items, by: identified.application,
                                                digest: { identified.executableDigest })
                let still = zip(items, decisions).filter { $0.1.decision == .ask }.map(\.0).sorted { $0.item < $1.item }
                guard !still.isEmpty else { continue }
                let answer = consent.confirm(Self.consentRequest(request, for: still, in: collection, by: identified.application,
                                                                 keychain: keychain))
                switch answer {
                case .allowOnce:
                    allowedOnce.formUnion(still)
                case .allowAlways where !identified.application.isVerified:
                    refused.formUnion(still)   // the dialog offered no such answer: no grant can name it
                case .allowAlways:
                    do {
                        let now = Clock.now()
                        try keychain.updateAccess(of: collection) { access in
                            for reference in still {
                                access.add(AccessGrant(application: identified.application, item: reference.item,
                                                       rights: AccessRights(request.action), granted: now), now: now)
                            }
                        }
                        for reference in still {
                            audit?.record(AuditEvent(action: .grant, outcome: .ok, application: identified.application,
                                                     collection: collection, item: reference.item,
                                                     label: try? keychain.metadata(of: reference).label,
                                                     detail: "always allowed by the user (\(AccessRights(request.action).name))"))
                        }
                    } catch {
                        log("cannot remember the grant for \(identified.application) in \(collection): \(error); allowed this time only")
                        allowedOnce.formUnion(still)
                    }
                case .deny:
                    refused.formUnion(still)
                case .unavailable(let why):
                    log("\(identified.application) was refused to \(request.verb) \(still.count) item(s) of \(collection): "
                        + "the user could not be asked (\(why)); " + Self.howToAllow(request.action, to: identified.application, in: collection))
                }
            }
            let answers = (allowedOnce, refused)
            connection.post { then(answers.0, answers.1) }
        }
    }

    /// The dialog's text: who wants to do what to which items, and who made them. Labels and
    /// names come from other programs: they are shortened and cleaned of control,
    /// line-breaking and bidirectional characters, so that they cannot dress the question up as
    /// something else.
    static func consentRequest(_ request: AccessRequest, for references: [ItemReference], in collection: CollectionID,
                               by application: Application, keychain: Keychain) -> ConsentRequest {
        let metadata = references.map { try? keychain.metadata(of: $0) }
        let labels = zip(references, metadata).prefix(5).map { reference, metadata in
            "'\(clean(metadata?.label ?? "item \(reference.item)"))'"
        }
        let keyring = clean((try? keychain.info(collection).label) ?? collection.rawValue)
        let creators = Set(metadata.map { $0?.creator.map { clean($0.description) } ?? "an unknown application" })
        let what = references.count == 1
            ? "\(request.noun(1)) \(labels[0])"
            : "\(request.noun(references.count)) (\(labels.joined(separator: ", "))\(references.count > 5 ? ", …" : ""))"
        let wanted = "wants to \(request.verb) \(what) in the keyring '\(keyring)', created by \(creators.sorted().joined(separator: ", "))."
        let title = request.action == .read ? "Allow access to a secret?" : "Allow a change to a keyring item?"
        guard application.isVerified else {
            return ConsentRequest(
                title: title,
                description: "A program that cannot be verified, calling itself '\(clean(application.name, limit: 16))', \(wanted)\n\n"
                    + "It hides which program it is (it made itself non-dumpable), so this answer cannot be remembered for it: "
                    + "allow only if you just started a program that needs this.",
                allowAlways: nil)
        }
        return ConsentRequest(
            title: title,
            description: "\(clean(application.description, limit: .max)) \(wanted)\n\n"
                + "Always allow remembers your answer for this application (`coffer access list` shows it).")
    }

    /// `text` safe to show: at most `limit` characters; control, line-breaking and
    /// bidirectional formatting characters as `?`.
    static func clean(_ text: String, limit: Int = 80) -> String {
        let unsafe: (Unicode.Scalar) -> Bool = { scalar in
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
                || (0x200E...0x200F).contains(scalar.value) || (0x202A...0x202E).contains(scalar.value)
                || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0x061C
        }
        var scalars = String.UnicodeScalarView(text.unicodeScalars.map { unsafe($0) ? "?" : $0 })
        if scalars.count > limit {
            scalars = String.UnicodeScalarView(scalars.prefix(limit - 1))
            scalars.append("…")
        }
        return String(scalars)
    }
}
