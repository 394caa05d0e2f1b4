import ArgumentParser
import CofferCore
import CofferCrypto

struct Update: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change the label, attributes or secret of matching items.",
        discussion: """
        Applies the changes to EVERY item of the collection that carries all the attributes \
        given (at least one attribute is required, so that a bare 'update' cannot touch \
        every item). Prints "updated COLLECTION/ID" for each. When nothing matches, exits \
        with status 1 without asking for the password.

        --set-attr REPLACES the whole attribute map with the pairs given (repeat it for \
        every attribute to keep, xdg:schema, service and account included); it does not \
        merge. --secret reads the new secret like 'add' does: from a no-echo prompt on a \
        terminal, else from stdin (after the password line with --password-stdin), one \
        trailing newline dropped unless --raw.

        EXAMPLES
          coffer update --service github.com --account alice --secret
          printf '%s\\n%s' "$PASSWORD" "$NEW_TOKEN" |
            coffer update --password-stdin --service api --secret
          coffer update --service old.example.com --set-label "New site" \\
            --set-attr service=new.example.com --set-attr account=alice \\
            --set-attr xdg:schema=org.freedesktop.Secret.Generic
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Option(name: .customLong("set-label"), help: ArgumentHelp("The new label.", valueName: "label"))
    var newLabel: String?

    @Option(name: .customLong("set-attr"), parsing: .singleValue,
            help: ArgumentHelp("An attribute of the new attribute map, which replaces the old one whole (repeatable).",
                               valueName: "name=value"))
    var newAttributePairs: [String] = []

    @Flag(name: .customLong("secret"), help: "Read a new secret (prompt, or stdin).")
    var newSecret = false

    @Flag(help: "With --secret: keep stdin byte for byte (no trailing newline dropped).")
    var raw = false

    @Option(name: .customLong("content-type"), help: ArgumentHelp("With --secret: the new secret's MIME type.", valueName: "type"))
    var contentType = "text/plain"

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if newLabel == nil && newAttributePairs.isEmpty && !newSecret {
            throw ValidationError("nothing to change: give --set-label, --set-attr or --secret")
        }
        if item.isEmpty {
            throw ValidationError("give at least one attribute to match (--service, --account, --attr or --class)")
        }
        if raw && !newSecret { throw ValidationError("--raw only applies to --secret") }
        _ = try parseAttributePairs(newAttributePairs, option: "--set-attr")
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        let query = Query(attributes: try item.attributes(), collection: id, limit: .all)
        guard try !access.keychain.search(query).isEmpty else {
            throw CLIError.notFound("no item in '\(id)' matches the query; nothing was updated")
        }
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        try access.unlock(id, input: input)
        let changes = ItemChanges(
            label: newLabel,
            attributes: newAttributePairs.isEmpty ? nil : try parseAttributePairs(newAttributePairs, option: "--set-attr"),
            secret: newSecret ? Secret(bytes: try input.secret(raw: raw), contentType: contentType) : nil)
        let updated: [ItemReference]
        do {
            updated = try access.keychain.update(query, with: changes)
        } catch {
            guard (error as? CofferError) == .itemNotFound else { throw error }
            throw CLIError.notFound("no item in '\(id)' matches the query; nothing was updated")
        }
        for reference in updated { Output.line("updated \(reference)") }
    }
}
