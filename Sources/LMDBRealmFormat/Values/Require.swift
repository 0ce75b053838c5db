/// Stops the process with `message` unless `condition` holds, in every build configuration.
///
/// Realm's programmer errors ("Realm accessed from incorrect thread.", "Object has been
/// deleted or invalidated.") must reach the person debugging even an optimised build, where
/// `precondition` stops without a word.
///
/// LMDBKit has the same function for its own misuse checks; this one is LMDBRealm's, since
/// only its Storage layer may import LMDBKit.
@inlinable @inline(__always)
package func require(
    _ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
    file: StaticString = #file, line: UInt = #line
) {
    if !condition() { fatalError(message(), file: file, line: line) }
}
