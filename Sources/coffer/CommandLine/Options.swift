import ArgumentParser
import CofferCore
import CofferStore

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"),
            help: ArgumentHelp("Use the store in <dir> instead of the default ($COFFER_DATA_DIR, else $XDG_DATA_HOME/coffer, else ~/.local/share/coffer).",
                               valueName: "dir"))
    var dataDir: String?

    /// The store directory: `--data-dir`, else the default for this environment.
    var storeDirectory: String { dataDir ?? FileStore.defaultDirectory() }
}

/// How collection passwords are read.
struct PasswordOptions: ParsableArguments {
    @Flag(name: .customLong("password-stdin"),
          help: "Read the collection password from the first line of stdin instead of asking on the terminal (see 'coffer --help').")
    var passwordStdin = false
}

/// The item classes, as `--class` spells them.
enum ClassArgument: String, ExpressibleByArgument, CaseIterable {
    case generic
    case internet

    var itemClass: ItemClass {
        switch self {
        case .generic: .genericPassword
        case .internet: .internetPassword
        }
    }
}

/// The attributes that select items (search, update, delete) or describe a new one (add).
struct ItemOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The 'service' attribute: what the secret is for (e.g. github.com).", valueName: "service"))
    var service: String?

    @Option(help: ArgumentHelp("The 'account' attribute: the user name or account id.", valueName: "account"))
    var account: String?

    @Option(name: .customLong("attr"), parsing: .singleValue,
            help: ArgumentHelp("Any other attribute, as <name>=<value> (repeatable).", valueName: "name=value"))
    var attributePairs: [String] = []

    @Option(name: .customLong("class"),
            help: ArgumentHelp("The item class; it sets the xdg:schema attribute to org.freedesktop.Secret.Generic (generic) or org.gnome.keyring.NetworkPassword (internet).",
                               valueName: "class"))
    var itemClass: ClassArgument?

    func validate() throws {
        _ = try attributes()
    }

    /// True when no attribute at all was given (the query matches every item).
    var isEmpty: Bool { service == nil && account == nil && attributePairs.isEmpty && itemClass == nil }

    /// The attribute map. With `defaultClass`, an item that names no schema gets that class's.
    func attributes(defaultClass: ClassArgument? = nil) throws -> Attributes {
        var result = try parseAttributePairs(attributePairs, option: "--attr")
        func set(_ name: String, _ value: String, from option: String) throws {
            if let existing = result[name], existing != value {
                throw ValidationError("\(option) conflicts with --attr \(name)=\(existing)")
            }
            result[name] = value
        }
        if let service { try set("service", service, from: "--service") }
        if let account { try set("account", account, from: "--account") }
        if let itemClass {
            try set(ItemClass.schemaAttribute, itemClass.itemClass.schema, from: "--class")
        } else if let defaultClass, result[ItemClass.schemaAttribute] == nil {
            result[ItemClass.schemaAttribute] = defaultClass.itemClass.schema
        }
        return result
    }
}

/// Parses `name=value` pairs (split at the first '='; the value may be empty or contain '=').
func parseAttributePairs(_ pairs: [String], option: String) throws -> Attributes {
    var result: Attributes = [:]
    for pair in pairs {
        guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
            throw ValidationError("\(option) wants <name>=<value>, got '\(Encode.display(pair))'")
        }
        let name = String(pair[..<equals])
        let value = String(pair[pair.index(after: equals)...])
        if let existing = result[name], existing != value {
            throw ValidationError("\(option) \(name) is given twice with different values")
        }
        result[name] = value
    }
    return result
}

/// Options every import takes (declared once, so that `coffer import --dry-run …` and
/// `coffer import gnome-keyring --dry-run` are the same flag).
struct ImportOptions: ParsableArguments {
    @Flag(name: .customLong("dry-run"),
          help: "Say what would be imported, and change nothing. An existing collection is unlocked as the import would unlock it (its password may be asked), to tell which items are there already.")
    var dryRun = false
}
