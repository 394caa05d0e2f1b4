import ArgumentParser
import CofferCore
import CofferCrypto

struct Search: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find items by their attributes.",
        discussion: """
        Lists the items of one collection that carry every attribute given (no attribute \
        matches every item): only the first match unless --all is given. Each match shows \
        its collection and id, label, lock state and attributes; the secret only with \
        --show-secret. Exits with status 1 when nothing matches (without asking for the \
        password).

        Reading labels and attributes needs the collection unlocked: the password is asked \
        unless cofferd has the collection unlocked already. With --no-unlock, no password \
        is asked: matches of a locked collection are listed by reference only, as locked.

        --json prints an array of objects {"collection", "id", "label", "attributes", \
        "locked"}, plus "secret" with --show-secret (a string; binary secrets that are not \
        UTF-8 come as "secret_base64" instead). Labels and attributes are null for locked \
        matches.

        --secret-only prints just the first match's secret followed by a newline (none \
        with --raw, which gives back exactly the bytes stored): for scripts.

        EXAMPLES
          coffer search --service github.com
          coffer search --all --json --collection work
          TOKEN=$(coffer search --service api --account bot --secret-only)
          coffer search --service ssh --account deploy --secret-only --raw > key
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Flag(help: "List every match, not only the first.")
    var all = false

    @Flag(name: .customLong("show-secret"), help: "Include the secrets in the listing.")
    var showSecret = false

    @Flag(name: .customLong("secret-only"), help: "Print only the first match's secret.")
    var secretOnly = false

    @Flag(help: "With --secret-only: print the secret's bytes exactly, without a newline.")
    var raw = false

    @Flag(help: "Print the matches as a JSON array.")
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
        if raw && !secretOnly {
            throw ValidationError("--raw only applies to --secret-only")
        }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        let attributes = try item.attributes()
        let limit: MatchLimit = all ? .all : .one
        // Matching works while locked: report "nothing" without asking for a password.
        guard try !access.keychain.search(Query(attributes: attributes, collection: id, limit: limit)).isEmpty else {
            throw CLIError.notFound("no item in '\(id)' matches the query")
        }
        if !noUnlock {
            try access.unlock(id, input: InputSource(passwordFromStdin: passwords.passwordStdin))
        }
        let results = try access.keychain.search(Query(attributes: attributes, collection: id, limit: limit,
                                                       returnAttributes: true))
        guard let first = results.first else {
            throw CLIError.notFound("no item in '\(id)' matches the query")
        }
        if secretOnly {
            var printed = false
            try access.keychain.forEachSecret(of: [first.reference]) { _, secret in
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
            guard printed else { throw CLIError.locked("collection '\(id)' is locked, or the item was deleted meanwhile") }
            return
        }
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

/// Formats one search result into a buffer reserved large enough never to reallocate (so that
/// no copy of a secret is left behind in freed memory); the caller zeroes it.
enum ResultWriter {
    static func capacity(for result: ItemMatch, secretBytes: Int) -> Int {
        var total = 256 + secretBytes * 6
        if let metadata = result.metadata {
            total += metadata.label.utf8.count * 6 + 32
            for (name, value) in metadata.attributes { total += (name.utf8.count + value.utf8.count) * 6 + 32 }
        }
        return total
    }

    /// One result as a JSON object, or in secret-tool's layout.
    static func write(_ result: ItemMatch, secret: Secret?, json: Bool, to out: inout [UInt8]) {
        if json {
            self.json(result, secret: secret, to: &out)
        } else {
            text(result, secret: secret, to: &out)
        }
    }

    private static func json(_ result: ItemMatch, secret: Secret?, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        key("collection", &out)
        Encode.jsonString(result.reference.collection.rawValue, to: &out)
        out.append(contentsOf: Array(", ".utf8))
        key("id", &out)
        out.append(contentsOf: Array(String(result.reference.item).utf8))
        out.append(contentsOf: Array(", ".utf8))
        key("label", &out)
        if let metadata = result.metadata {
            Encode.jsonString(metadata.label, to: &out)
        } else {
            out.append(contentsOf: Array("null".utf8))
        }
        out.append(contentsOf: Array(", ".utf8))
        key("attributes", &out)
        if let metadata = result.metadata {
            out.append(UInt8(ascii: "{"))
            for (position, name) in metadata.attributes.keys.sorted().enumerated() {
                if position > 0 { out.append(contentsOf: Array(", ".utf8)) }
                Encode.jsonString(name, to: &out)
                out.append(contentsOf: Array(": ".utf8))
                Encode.jsonString(metadata.attributes[name]!, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        } else {
            out.append(contentsOf: Array("null".utf8))
        }
        out.append(contentsOf: Array(", ".utf8))
        key("locked", &out)
        out.append(contentsOf: Array((result.isLocked ? "true" : "false").utf8))
        if let secret {
            secret.bytes.withUnprotectedCopy { bytes in
                out.append(contentsOf: Array(", ".utf8))
                if isValidUTF8(bytes) {
                    key("secret", &out)
                    Encode.jsonString(bytes, to: &out)
                } else {
                    key("secret_base64", &out)
                    out.append(UInt8(ascii: "\""))
                    Encode.base64(bytes, to: &out)
                    out.append(UInt8(ascii: "\""))
                }
            }
        }
        out.append(UInt8(ascii: "}"))
    }

    /// secret-tool's layout: a "[collection/id]" header, then "key = value" lines, with
    /// control characters escaped.
    private static func text(_ result: ItemMatch, secret: Secret?, to out: inout [UInt8]) {
        line("[\(result.reference)]", &out)
        if let metadata = result.metadata {
            line("label = \(Encode.display(metadata.label))", &out)
        }
        line("locked = \(result.isLocked ? "yes" : "no")", &out)
        if let metadata = result.metadata {
            for name in metadata.attributes.keys.sorted() {
                line("attribute.\(Encode.display(name)) = \(Encode.display(metadata.attributes[name]!))", &out)
            }
        }
        if let secret {
            secret.bytes.withUnprotectedCopy { bytes in
                if isValidUTF8(bytes) {
                    out.append(contentsOf: Array("secret = ".utf8))
                    Encode.display(bytes, to: &out)
                } else {
                    out.append(contentsOf: Array("secret_base64 = ".utf8))
                    Encode.base64(bytes, to: &out)
                }
                out.append(UInt8(ascii: "\n"))
            }
        }
    }

    private static func key(_ name: String, _ out: inout [UInt8]) {
        Encode.jsonString(name, to: &out)
        out.append(contentsOf: Array(": ".utf8))
    }

    private static func line(_ text: String, _ out: inout [UInt8]) {
        out.append(contentsOf: Array(text.utf8))
        out.append(UInt8(ascii: "\n"))
    }
}
