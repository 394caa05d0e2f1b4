import ArgumentParser
import CofferCore

/// `--collection ID`, the one way every command names the collection it works on. `Role` only
/// words the help (which ids the command takes); commands that took the collection as an
/// argument before keep that form too, and `name(or:)` merges the two.
struct CollectionOption<Role: CollectionRole>: ParsableArguments {
    @Option(name: .customLong("collection"), help: ArgumentHelp(Role.help, valueName: "id"))
    var collection: String?

    /// The collection named by `--collection` or by `argument` (the positional form), nil
    /// when neither; naming two different ones is a usage error.
    func name(or argument: String?) throws -> String? {
        if let collection, let argument, collection != argument {
            throw ValidationError("the collection is named twice ('\(Encode.display(argument))' and --collection \(Encode.display(collection))); name it once")
        }
        return collection ?? argument
    }

    /// Like `name(or:)`, for commands that cannot do without a collection.
    func required(or argument: String?) throws -> String {
        guard let name = try name(or: argument) else {
            throw ValidationError("say which collection, with --collection ID")
        }
        return name
    }
}

/// Which collections a command's `--collection` takes, for its help.
protocol CollectionRole {
    static var help: String { get }
}

/// Any existing collection, by id or alias; without one, the default collection.
enum AnyCollection: CollectionRole {
    static let help = "The collection (an id or an alias). Default: the 'default' alias, else 'login'."
}

/// The id of a collection to create.
enum NewCollection: CollectionRole {
    static let help = "The new collection's id (see the description above)."

    /// `text` as the id of a new collection: the same rule, and the same message, whether
    /// coffer works on the files or through the daemon (checked before either is opened).
    static func id(_ text: String) throws -> CollectionID {
        guard let id = CollectionID(text) else {
            throw ValidationError("'\(Encode.display(text))' cannot be a collection id: an id is \(CollectionID.rule)")
        }
        guard id != .session else {
            throw ValidationError("'session' is reserved for the daemon's in-memory collection; choose another id")
        }
        return id
    }
}

/// An existing collection by its id alone (for commands that change what an alias names).
enum CollectionByID: CollectionRole {
    static let help = "The collection's id (not an alias)."
}
