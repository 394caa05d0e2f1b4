import ArgumentParser
import CofferCore
import CofferCrypto
import CofferStore

struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Store a new secret.",
        discussion: """
        Adds an item with the given attributes to a collection. The secret is typed at a \
        no-echo prompt (twice) when stdin is a terminal; otherwise it is read from stdin to \
        end of file, and one trailing newline is dropped unless --raw is given. With \
        --password-stdin, the first line of stdin is the collection password and the \
        secret is everything after it. An empty secret is refused.

        The item class (--class, default generic) sets the xdg:schema attribute, unless \
        --attr xdg:schema=... names one itself. The label defaults to "SERVICE (ACCOUNT)", \
        or SERVICE alone without --account; without --service, --label is required.

        An item whose attributes are exactly those of an existing item is a duplicate: \
        coffer refuses it (exit status 4) unless --replace is given, which overwrites that \
        item's label and secret in place (it keeps its id).

        On success, prints "added COLLECTION/ID" (or "replaced COLLECTION/ID").

        EXAMPLES
          coffer add --service github.com --account alice
          printf '%s\\n%s' "$PASSWORD" "$TOKEN" |
            coffer add --password-stdin --service api --account bot
          coffer add --class internet --attr server=imap.example.com \\
            --attr user=bob --label "Mail" < pw.txt
          coffer add --raw --service ssh --account deploy < id_ed25519
        """
    )

    @OptionGroup var global: GlobalOptions
    @OptionGroup var item: ItemOptions
    @OptionGroup var target: CollectionOption<AnyCollection>

    @Option(help: ArgumentHelp("The item's label (its display name).", valueName: "label"))
    var label: String?

    @Option(name: .customLong("content-type"), help: ArgumentHelp("The secret's MIME type.", valueName: "type"))
    var contentType = "text/plain"

    @Flag(help: "Overwrite an item with exactly the same attributes instead of failing.")
    var replace = false

    @Flag(help: "Store stdin byte for byte (keep a trailing newline): for binary secrets.")
    var raw = false

    @Flag(name: .customLong("local-only"),
          help: "Keep the item on this machine only, out of a synced collection's folder (it carries the attribute coffer:sync=local).")
    var localOnly = false

    @OptionGroup var passwords: PasswordOptions

    func validate() throws {
        if label == nil && item.service == nil {
            throw ValidationError("give the item a --label (or a --service, from which the label is made)")
        }
    }

    func run() throws {
        let access = try KeychainAccess(global)
        let id = try access.resolve(target.collection)
        var attributes = try item.attributes(defaultClass: .generic)
        if localOnly { attributes[CollectionSync.localOnlyAttribute.name] = CollectionSync.localOnlyAttribute.value }
        let label = self.label ?? defaultLabel()
        let input = InputSource(passwordFromStdin: passwords.passwordStdin)
        try access.unlock(id, input: input)
        let secret = Secret(bytes: try input.secret(raw: raw), contentType: contentType)
        let added: (reference: ItemReference, replaced: Bool)
        do {
            added = try access.keychain.add(NewItem(label: label, attributes: attributes, secret: secret),
                                            to: id, replace: replace)
        } catch {
            guard (error as? CofferError) == .duplicateItem else { throw error }
            throw CLIError.duplicate("an item with exactly these attributes already exists in '\(id)'; nothing was stored. Use --replace to overwrite it, or add an attribute that tells them apart")
        }
        Output.line("\(added.replaced ? "replaced" : "added") \(added.reference)")
    }

    private func defaultLabel() -> String {
        let service = item.service ?? ""
        guard let account = item.account else { return service }
        return "\(service) (\(account))"
    }
}
