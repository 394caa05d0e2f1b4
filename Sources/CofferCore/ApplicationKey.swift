/// The keys the Secret portal keeps for sandboxed (Flatpak) applications: items with the
/// `xdg:schema` `org.freedesktop.portal.Secret` and the application's id in `app_id`. Such a key
/// is its application's alone: only the portal makes one, reads it and hands it to that
/// application, and only when the application made it (its creator is `flatpak:APP-ID`). No
/// caller of the Secret Service reads, changes, replaces, deletes or plants one, whatever the
/// collection's policy.
public enum ApplicationKey {
    /// The `xdg:schema` of an application's key.
    public static let schema = "org.freedesktop.portal.Secret"
    /// The attribute naming the application a key belongs to.
    public static let appIDAttribute = "app_id"

    /// Whether `attributes` are those of an application's key.
    public static func isKey(_ attributes: Attributes) -> Bool {
        attributes[ItemClass.schemaAttribute] == schema
    }

    /// What a caller that may not touch an application's key is told.
    public static let refusal = "it is a sandboxed application's key, which only the Secret portal hands out, to that application alone"

    /// What a caller is told that tries to make an item an application's key.
    public static let plantRefusal = "an item with the schema \(schema) is a sandboxed application's key, "
        + "which only the Secret portal makes, for the application it is asked by"
}
