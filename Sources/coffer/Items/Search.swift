import ArgumentParser
import CofferCore
import CofferCrypto

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find items by their attributes.",
        discussion: """
        Lists the items of one collection (--collection, else the default one) that carry \
        every attribute given (no attribute matches every item): only the first match \
        unless --all is given; coffer then says on stderr how many more matched. Each match \
        shows its collection and id, label, created and modified times (local time), lock \
        state and attributes; the secret only with --show-secret. Exits with status 1 when \
        nothing matches (without asking for the password).

        Reading labels and attributes needs the collection unlocked: the password is asked \
        unless cofferd has the collection unlocked already. With --no-unlock, no password \
        is asked: matches of a locked collection are listed by reference only, as locked.

        --all-collections searches every collection, as secret-tool does, in the order \
        'coffer collections' lists them. Each collection that has matches to show is \
        unlocked the usual way: on a terminal its password is asked; with --password-stdin \
        each such collection takes one line of stdin, in that order (a collection the \
        daemon has unlocked already reads its line and ignores it). A collection whose \
        password is wrong or cannot be had stays locked: coffer says so, lists its matches \
        by reference only, goes on with the others and exits with status 3 at the end.

        --json prints an array of objects {"collection", "id", "label", "attributes", \
        "created", "modified", "locked"}, plus "secret" with --show-secret (a string; \
        binary secrets that are not UTF-8 come as "secret_base64" instead). Times are \
        seconds since 1970 (UTC). Label, attributes and times are null for locked \
        matches. When nothing matches, it prints [] (and exits with status 1); after any \
        other error it prints nothing on stdout.

        --secret-only prints just the first match's secret followed by a newline (none \
        with --raw, which gives back exactly the bytes stored): for scripts.

        EXAMPLES
          coffer search --service github.com
          coffer search --all --json --collection work
          coffer search --all --all-collections --service github.com
          TOKEN=$(coffer search --service api --account bot --secret-only)
          coffer search --service ssh --account deploy --secret-only --raw > key
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Flag(help: "List every match, not only the first.")
    var all = false

    @Flag(name: .customLong("all-collections"), help: "Search every collection, not only one (see above).")
    var allCollections = false

    @Flag(name: .customLong("show-secret"), help: "Include the secrets in the listing.")
    var showSecret = false

    @Flag(name: .customLong("secret-only"), help: "Print only the first match's secret.")
    var secretOnly = false

    @Flag(help: "With --secret-only: print the secret's bytes exactly, without a newline.")
    var raw = false

    @Flag(help: "Print the matches as a JSON array ([] when nothing matches).")
    var json = false

    @Flag(name: .customLong("no-unlock"), help: "Do not ask for the password; list matches by reference only.")
    var noUnlock = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if secretOnly && (all || json || showSecret) {
            throw ValidationError("--secret-only prints one secret alone; it does not combine with --all, --json or --show-secret")
        }
        if noUnlock && (showSecret || secretOnly) {
            throw ValidationError("--no-unlock cannot show secrets")
        }
        if allCollections && target.collection != nil {
            throw ValidationError("--all-collections searches every collection; leave out --collection")
        }
        if raw && !secretOnly {
            throw ValidationError("--raw only applies to --secret-only")
        }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let attributes = try item.attributes()
        let scope = try collections(access)
        // Matching works while locked: count every match, and report "nothing", without a password.
        var matches: [(id: CollectionID, references: [ItemReference])] = []
        for id in scope {
            let found = try access.keychain.search(Query(attributes: attributes, collection: id, limit: .all))
            if !found.isEmpty { matches.append((id, found.map(\.reference))) }
        }
        let total = matches.reduce(0) { $0 + $1.references.count }
        guard total > 0 else {
            if json { Output.line("[]") }
            throw CLIError.notFound(allCollections ? "no item in any collection matches the query"
                                                   : "no item in '\(scope[0])' matches the query")
        }
        if !all { matches = [(matches[0].id, [matches[0].references[0]])] }
        var results: [ItemMatch] = []
        var stillLocked: [CollectionID] = []
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        for (id, references) in matches {
            if !noUnlock, let failure = try unlock(id, access: access, input: input) {
                let reason = failure.status == ExitStatus.locked ? "wrong password" : failure.message
                Output.note("collection '\(id)' stays locked (\(reason)): its \(Self.matchesAre(references.count)) listed as locked")
                stillLocked.append(id)
                results += references.map { ItemMatch(reference: $0, isLocked: true, metadata: nil) }
                continue
            }
            results += try access.keychain.search(Query(attributes: attributes, collection: id, limit: all ? .all : .one,
                                                         returnAttributes: true))
        }
        guard let first = results.first else { throw CLIError.notFound("the matching items were deleted meanwhile; search again") }
        if !all && total > 1 {
            let more = Self.moreItemsMatch(total - 1)
            Output.note(secretOnly ? "\(more) the query; this is the secret of \(first.reference). Narrow the query to choose another"
                                   : "\(more) the query; list them all with --all")
        }
        if secretOnly {
            try printSecret(of: first, access: access)
        } else {
            try printListing(results, access: access)
        }
        if !stillLocked.isEmpty {
            let names = stillLocked.map { "'\($0)'" }.joined(separator: ", ")
            throw CLIError.locked("\(names) stayed locked, so their matches were listed without labels or attributes; give their passwords (with --password-stdin: one line for each collection that has matches, in the order of 'coffer collections')")
        }
    }

    /// The collections to search: every one with --all-collections (in the order
    /// 'coffer collections' lists them), else the one --collection names or the default.
    private func collections(_ access: KeychainAccess) throws -> [CollectionID] {
        guard allCollections else { return [try access.resolve(target.collection)] }
        let ids = try access.keychain.collectionIDs()
        guard !ids.isEmpty else {
            throw CLIError.notFound("no collection yet. Create one with: \(access.command("create-collection login"))")
        }
        return ids
    }

    /// Unlocks `id` the usual way. With --all-collections a password that is wrong or cannot be
    /// had is not the end: it is returned, and the search goes on with the other collections.
    private func unlock(_ id: CollectionID, access: KeychainAccess, input: InputSource) throws -> CLIError? {
        do {
            try access.unlock(id, input: input)
            return nil
        } catch {
            let failure = CLIError.from(error)
            guard allCollections && !secretOnly,
                  [ExitStatus.locked, ExitStatus.usage].contains(failure.status) else { throw error }
            return failure
        }
    }

    /// "1 match is" / "3 matches are".
    private static func matchesAre(_ number: Int) -> String {
        number == 1 ? "1 match is" : "\(number) matches are"
    }

    /// "1 more item matches" / "3 more items match".
    private static func moreItemsMatch(_ number: Int) -> String {
        number == 1 ? "1 more item matches" : "\(number) more items match"
    }

    private func printSecret(of match: ItemMatch, access: KeychainAccess) throws {
        var printed = false
        try access.keychain.forEachSecret(of: [match.reference]) { _, secret in
            secret.bytes.withUnprotectedCopy { bytes in
                var out = [UInt8]()
                out.reserveCapacity(bytes.count + 1)
                out.append(contentsOf: bytes)
                if !raw { out.append(UInt8(ascii: "\n")) }
                Output.write(out)
                wipe(&out)
            }
            printed = true
        }
        guard printed else {
            throw CLIError.locked("collection '\(match.reference.collection)' is locked, or the item was deleted meanwhile")
        }
    }

    private func printListing(_ results: [ItemMatch], access: KeychainAccess) throws {
        var items = try showSecret ? itemsWithSecrets(results, access: access) : results.map { result in
            var item = [UInt8]()
            item.reserveCapacity(ResultWriter.capacity(for: result, secretBytes: 0))
            ResultWriter.write(result, secret: nil, json: json, to: &item)
            return item
        }
        var out = [UInt8]()
        out.reserveCapacity(items.reduce(16) { $0 + $1.count + 4 })
        out.append(contentsOf: Array((json ? "[\n  " : "").utf8))
        for index in items.indices {
            if index > 0 { out.append(contentsOf: Array((json ? ",\n  " : "\n").utf8)) }
            out.append(contentsOf: items[index])
            wipe(&items[index])
        }
        if json { out.append(contentsOf: Array("\n]\n".utf8)) }
        Output.write(out)
        wipe(&out)
    }

    /// Each result formatted with its secret, the secrets read one at a time (so that any
    /// number of them needs secure memory for one only). Fails, printing nothing, if a secret
    /// cannot be had: a listing never silently lacks one.
    private func itemsWithSecrets(_ results: [ItemMatch], access: KeychainAccess) throws -> [[UInt8]] {
        var items = [[UInt8]?](repeating: nil, count: results.count)
        do {
            try access.keychain.forEachSecret(of: results.map(\.reference)) { position, secret in
                var item = [UInt8]()
                item.reserveCapacity(ResultWriter.capacity(for: results[position], secretBytes: secret.bytes.count))
                ResultWriter.write(results[position], secret: secret, json: json, to: &item)
                items[position] = item
            }
            let missing = results.indices.filter { items[$0] == nil }
            guard missing.isEmpty else {
                let names = missing.prefix(5).map { "\(results[$0].reference)" }.joined(separator: ", ")
                throw CLIError.storeFailure("the secrets of \(missing.count) matching items could not be read (\(names)); they may have been deleted or locked meanwhile. Nothing was printed; try again")
            }
        } catch {
            for index in items.indices { if items[index] != nil { wipe(&items[index]!) } }
            throw error
        }
        return items.map { $0! }
    }
}
