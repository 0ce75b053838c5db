/// Stops the process with `message` unless `condition` holds, in every build configuration.
///
/// Programmer errors (a realm used from the wrong thread, a deleted object read) stop the
/// process. `precondition` would do so silently in optimised builds; this prints the message
/// there too, so the person debugging a release build sees what went wrong.
@inline(__always)
package func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #file, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
