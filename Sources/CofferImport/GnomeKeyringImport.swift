import CofferCore
import CofferCrypto
import GnomeKeyringFormat

extension GnomeKeyring.Item {
    /// This item as Coffer stores it: label, attributes (less gnome-keyring's `gkr:compat:*`
    /// bookkeeping), secret as text/plain (the files keep no content type), and its times.
    public var newItem: NewItem {
        NewItem(label: label, attributes: attributes.filter { !$0.key.hasPrefix("gkr:compat:") },
                secret: Secret(bytes: secret), times: (created, modified))
    }
}

/// Where gnome-keyring keeps its keyrings, and which one its `default` alias names.
public enum GnomeKeyringFiles {
    /// `$XDG_DATA_HOME/keyrings`, else `~/.local/share/keyrings`.
    public static func directory(environment: [String: String]) -> String {
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/keyrings" }
        return (environment["HOME"] ?? "") + "/.local/share/keyrings"
    }

    /// The collection id a keyring file becomes: its name, made a valid id if it is not one.
    public static func collectionID(forFile name: String) -> CollectionID {
        CollectionID(name) ?? CollectionID.derived(fromLabel: name, avoiding: [])
    }

    /// The keyring name in gnome-keyring's `default` file (its default alias), if any.
    public static func defaultKeyring(in contents: [UInt8]) -> String? {
        let name = String(decoding: contents, as: UTF8.self).split(whereSeparator: \.isWhitespace).first.map(String.init)
        return name?.isEmpty == false ? name : nil
    }
}
