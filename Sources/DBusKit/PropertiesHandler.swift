/// `org.freedesktop.DBus.Properties` on top of `DBusObject.getProperty/setProperty`.
enum PropertiesHandler {
    static func handle(_ call: MethodCall, object: any DBusObject, interfaces: [InterfaceDescription]) {
        do {
            switch try reply(call, object: object, interfaces: interfaces) {
            case .reply(let values): call.reply(values)
            case .deferred: break
            }
        } catch {
            call.fail(error)
        }
    }

    private static func reply(_ call: MethodCall, object: any DBusObject,
                              interfaces: [InterfaceDescription]) throws -> MethodResult {
        let args = call.arguments
        guard let interfaceName = args.first?.string else { throw DBusError.invalidArgs("missing interface name") }
        switch call.member {
        case "Get":
            let (iface, property) = try find(interfaceName, args[1].string ?? "", in: interfaces)
            guard property.access.isReadable else {
                throw DBusError.invalidArgs("property \(iface.name).\(property.name) is not readable")
            }
            return .reply([.variant(try read(property, of: iface, object: object, call: call))])
        case "GetAll":
            if StandardInterface.names.contains(interfaceName) {
                return .reply([.variantDictionary([:])])
            }
            guard let iface = interfaces.first(where: { $0.name == interfaceName }) else {
                throw DBusError.unknownInterface("object \(call.path) has no interface \(interfaceName)")
            }
            var values: [String: DBusValue] = [:]
            for property in iface.properties where property.access.isReadable {
                values[property.name] = try read(property, of: iface, object: object, call: call)
            }
            return .reply([.variantDictionary(values)])
        case "Set":
            let (iface, property) = try find(interfaceName, args[1].string ?? "", in: interfaces)
            guard property.access.isWritable else {
                throw DBusError.propertyReadOnly("property \(iface.name).\(property.name) is read-only")
            }
            guard let value = args[2].variantValue else { throw DBusError.invalidArgs("value must be a variant") }
            guard value.signatureString == property.type.rawValue else {
                throw DBusError.invalidArgs("property \(iface.name).\(property.name) has type '\(property.type)', got a value of type '\(value.signatureString)'")
            }
            return try object.setProperty(property.name, interface: iface.name, value: value, call: call)
        default:
            throw DBusError.unknownMethod("no method \(StandardInterface.properties).\(call.member)")
        }
    }

    /// Finds a property; an empty interface name searches all interfaces (as the spec allows).
    private static func find(_ interfaceName: String, _ name: String,
                             in interfaces: [InterfaceDescription]) throws -> (InterfaceDescription, PropertyDescription) {
        if interfaceName.isEmpty {
            for iface in interfaces { if let p = iface.property(named: name) { return (iface, p) } }
            throw DBusError.unknownProperty("no property \(name)")
        }
        if StandardInterface.names.contains(interfaceName) {
            throw DBusError.unknownProperty("no property \(interfaceName).\(name)")
        }
        guard let iface = interfaces.first(where: { $0.name == interfaceName }) else {
            throw DBusError.unknownInterface("no interface \(interfaceName)")
        }
        guard let property = iface.property(named: name) else {
            throw DBusError.unknownProperty("no property \(interfaceName).\(name)")
        }
        return (iface, property)
    }

    private static func read(_ property: PropertyDescription, of iface: InterfaceDescription,
                             object: any DBusObject, call: MethodCall) throws -> DBusValue {
        let value = try object.getProperty(property.name, interface: iface.name, call: call)
        guard value.signatureString == property.type.rawValue else {
            throw DBusError.failed("internal error: property \(iface.name).\(property.name) produced type '\(value.signatureString)' instead of '\(property.type)'")
        }
        return value
    }
}
