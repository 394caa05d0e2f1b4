/// Names and descriptions of the standard interfaces the object server implements itself.
public enum StandardInterface {
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    public static let properties = "org.freedesktop.DBus.Properties"
    public static let peer = "org.freedesktop.DBus.Peer"

    static let introspectableDescription = InterfaceDescription(introspectable, methods: [
        MethodDescription("Introspect", out: [ArgumentDescription("xml_data", .string)]),
    ])

    static let peerDescription = InterfaceDescription(peer, methods: [
        MethodDescription("Ping"),
        MethodDescription("GetMachineId", out: [ArgumentDescription("machine_uuid", .string)]),
    ])

    static let propertiesDescription = InterfaceDescription(properties, methods: [
        MethodDescription("Get", in: [ArgumentDescription("interface_name", .string),
                                      ArgumentDescription("property_name", .string)],
                          out: [ArgumentDescription("value", .variant)]),
        MethodDescription("GetAll", in: [ArgumentDescription("interface_name", .string)],
                          out: [ArgumentDescription("properties", .variantDictionary)]),
        MethodDescription("Set", in: [ArgumentDescription("interface_name", .string),
                                      ArgumentDescription("property_name", .string),
                                      ArgumentDescription("value", .variant)]),
    ], signals: [
        SignalDescription("PropertiesChanged", [ArgumentDescription("interface_name", .string),
                                                ArgumentDescription("changed_properties", .variantDictionary),
                                                ArgumentDescription("invalidated_properties", .stringArray)]),
    ])

    static let names: Set<String> = [introspectable, properties, peer]
}
