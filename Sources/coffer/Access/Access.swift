import ArgumentParser
import CofferCore
import CofferCrypto
import SystemKit

struct Access: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access",
        abstract: "List, grant and revoke applications' access to a collection's secrets.",
        discussion: """
        Under the 'ask' and 'strict' policies (see 'coffer policy') an application reads \
        the secret of an item it did not create, or changes or deletes that item, only with \
        a grant: given here, or by answering "Always allow" when asked. A grant allows \
        reading, changing, or both; it covers one item or the whole collection, and may \
        expire. Applications are named as the service identifies \
        them: flatpak:APP-ID, snap:NAME, or a program's absolute path (exe:/usr/bin/NAME \
        or just /usr/bin/NAME). Every program running the same executable is the same \
        application: a grant to /usr/bin/python3 covers every Python script.

        These commands work on the store files and need the collection's password, also \
        when cofferd runs (it sees changes at once).

        EXAMPLES
          coffer access list
          coffer access grant /usr/bin/git-credential-libsecret --service github.com
          coffer access grant flatpak:org.gnome.Fractal --collection work --for 30d
          coffer access grant /usr/bin/python3.11 --read --change --service backup
          coffer access revoke /usr/bin/python3
        """,
        subcommands: [AccessList.self, AccessGrantCommand.self, AccessRevoke.self]
    )
}

struct AccessList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List a collection's policy and grants.",
        discussion: """
        Prints the policy, then one line per grant: the application, what it allows (read, \
        change, or read+change), what it covers (an item, by reference and label, or the \
        whole collection), when it was given and when it expires. With --json, an object \
        {"collection", "policy", "grants": [{"application", "rights", "item", "label", \
        "granted", "expires", "sameBinaryOnly"}]} (times in seconds since \
        1970; "item" and "expires" null for the whole collection and never).
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>
    @OptionGroup var passwords: PasswordOptions

    @Flag(help: "Print as JSON.")
    var json = false

    func run() throws {
        let rules = try AccessRules(global, collection: target.collection, passwords: passwords)
        let access = try rules.rules
        let now = Clock.now()
        let grants = access.grants.filter { !$0.isExpired(at: now) }
            .sorted { ($0.application.encoded, $0.item ?? 0) < ($1.application.encoded, $1.item ?? 0) }
        func label(_ grant: AccessGrant) -> String? {
            grant.item.flatMap { try? rules.keychain.metadata(of: ItemReference(collection: rules.collection, item: $0)).label }
        }
        if json {
            var out = Array("{\"collection\": ".utf8)
            Encode.jsonString(rules.collection.rawValue, to: &out)
            out += Array(", \"policy\": \"\(access.policy.rawValue)\", \"grants\": [".utf8)
            for (index, grant) in grants.enumerated() {
                out += Array((index == 0 ? "\n  {\"application\": " : ",\n  {\"application\": ").utf8)
                Encode.jsonString(grant.application.encoded, to: &out)
                out += Array(", \"rights\": \"\(grant.rights.name)\"".utf8)
                out += Array(", \"item\": \(grant.item.map(String.init) ?? "null"), \"label\": ".utf8)
                if let text = label(grant) { Encode.jsonString(text, to: &out) } else { out += Array("null".utf8) }
                out += Array(", \"granted\": \(grant.granted), \"expires\": \(grant.expires.map(String.init) ?? "null")".utf8)
                out += Array(", \"sameBinaryOnly\": \(grant.executableDigest != nil)}".utf8)
            }
            out += Array((grants.isEmpty ? "]}\n" : "\n]}\n").utf8)
            Output.write(out)
            return
        }
        Output.line("collection '\(rules.collection)': policy \(access.policy.rawValue) (\(access.policy.summary))")
        if grants.isEmpty {
            Output.line("no grants")
            return
        }
        for grant in grants {
            let what = grant.item.map { "item \(rules.collection)/\($0) '\(Encode.display(label(grant) ?? "(deleted)"))'" }
                ?? "every item"
            var line = "\(grant.application.encoded)  \(grant.rights.name)  \(what)  since \(LocalTime.format(secondsSince1970: grant.granted))"
            if let expires = grant.expires { line += "  until \(LocalTime.format(secondsSince1970: expires))" }
            if grant.executableDigest != nil { line += "  (this binary only)" }
            Output.line(line)
        }
    }
}

struct AccessGrantCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Let an application read, or change, items it did not create.",
        discussion: """
        A grant lets the application read the secrets it covers (the default), or with \
        --change change them (their secrets, labels and attributes, replace or delete \
        them) but not read them; --read --change allows both. \
        Without --item or attributes, the grant covers every item of the collection, now \
        and later. With --item (the number in a reference such as [login/3], as 'coffer \
        search' prints it) or attributes (--service, --account, --attr), it covers those \
        items. --for makes it expire. --same-binary ties it to the program file as it is \
        now: replacing the file (an update) ends the grant.
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The application: flatpak:APP-ID, snap:NAME, or a program's absolute path.", valueName: "application"))
    var application: String

    @Option(help: ArgumentHelp("One item, by its number in the collection.", valueName: "number"))
    var item: UInt64?

    @OptionGroup var items: ItemOptions

    @Option(name: .customLong("for"), help: ArgumentHelp("Expire after this long: \(DurationArgument.help).", valueName: "duration"))
    var duration: DurationArgument?

    @Flag(name: .customLong("same-binary"), help: "Only for the program file at that path as it is now (executables only).")
    var sameBinary = false

    @Flag(help: "Allow reading the secrets (the default without --change).")
    var read = false

    @Flag(help: "Allow changing the items: their secrets, labels and attributes, replacing and deleting them.")
    var change = false

    /// What the grant allows.
    private var rights: AccessRights {
        switch (read, change) {
        case (_, false): .read
        case (false, true): .change
        case (true, true): .all
        }
    }

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        let application = try AccessRules.application(self.application, granting: true)
        if item != nil && !items.isEmpty { throw ValidationError("choose items by --item or by attributes, not both") }
        if sameBinary && application.kind != .executable {
            throw ValidationError("--same-binary applies to programs named by path, not to \(application.kind.rawValue) apps")
        }
    }

    func run() throws {
        let application = try AccessRules.application(self.application, granting: true)
        var digest: [UInt8]?
        if sameBinary {
            guard let bytes = try? FileSystem.contents(of: application.name) else {
                throw CLIError.notFound("cannot read the program \(application.name) to tie the grant to it")
            }
            digest = Digest.sha256(bytes)
        }
        let rules = try AccessRules(global, collection: target.collection, passwords: passwords)
        let targets = try selectedItems(in: rules)
        let now = Clock.now()
        let expires = duration.map { now + $0.seconds }
        try rules.change { access in
            for target in targets {
                access.add(AccessGrant(application: application, item: target, rights: rights, granted: now, expires: expires,
                                       executableDigest: digest), now: now)
            }
        }
        for target in targets {
            AccessAudit.record(.grant, in: rules, application: application, item: target,
                               detail: "coffer access grant (\(rights.name))" + (expires == nil ? "" : " (expires)"))
        }
        let what = targets == [nil] ? "every item of '\(rules.collection)'" : "\(targets.count) item(s) of '\(rules.collection)'"
        let may = rights == .all ? "read and change" : rights == .change ? "change" : "read"
        Output.line("\(application.description) may now \(may) \(what)\(expires.map { " until \(LocalTime.format(secondsSince1970: $0))" } ?? "")")
    }

    /// The items the grant covers: [nil] for the whole collection.
    private func selectedItems(in rules: AccessRules) throws -> [ItemID?] {
        if let item {
            guard rules.keychain.exists(ItemReference(collection: rules.collection, item: item)) else {
                throw CLIError.notFound("collection '\(rules.collection)' has no item \(item); find items with: \(rules.access.command("search --collection \(rules.collection.rawValue)"))")
            }
            return [item]
        }
        guard !items.isEmpty else { return [nil] }
        let found = try rules.keychain.search(Query(attributes: try items.attributes(), collection: rules.collection))
        guard !found.isEmpty else { throw CLIError.notFound("no item of '\(rules.collection)' has these attributes; nothing was granted") }
        return found.map(\.reference.item)
    }
}

struct AccessRevoke: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "Take back an application's grants.",
        discussion: "Removes the application's grants in the collection: all of them, or with --item the one for that item."
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Argument(help: ArgumentHelp("The application, as 'coffer access list' shows it.", valueName: "application"))
    var application: String

    @Option(help: ArgumentHelp("Only the grant for this item number.", valueName: "number"))
    var item: UInt64?

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        _ = try AccessRules.application(application)
    }

    func run() throws {
        let application = try AccessRules.application(self.application)
        let rules = try AccessRules(global, collection: target.collection, passwords: passwords)
        var removed = 0
        try rules.change { removed = $0.revoke(application, item: item) }
        guard removed > 0 else {
            throw CLIError.notFound("\(application.description) has no grant\(item.map { " for item \($0)" } ?? "") in '\(rules.collection)'; see: \(rules.access.command("access list --collection \(rules.collection.rawValue)"))")
        }
        AccessAudit.record(.revoke, in: rules, application: application, item: item, detail: "\(removed) grant(s) removed")
        Output.line("removed \(removed) grant(s) of \(application.description) in '\(rules.collection)'")
    }
}
