// `import LMDBRealm` makes Foundation's types (Date, Data, UUID, URL, Decimal) visible, as
// `import RealmSwift` does: model files ported from RealmSwift declare `Date` properties with
// that one import.
@_exported public import Foundation
