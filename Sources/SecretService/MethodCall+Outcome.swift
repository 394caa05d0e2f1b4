import CofferCore
import DBusKit

extension MethodCall {
    /// Answers with `output` of a success, or with the error of a failure.
    func answer<Value, Failure: Error, Output: DBusArguments>(_ outcome: Result<Value, Failure>, _ output: (Value) -> Output) {
        switch outcome {
        case .success(let value): reply(output(value))
        case .failure(let error): fail(error)
        }
    }
}
