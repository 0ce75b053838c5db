// `import LMDBRealm` makes Foundation's types (Date, Data, UUID, URL, Decimal) visible, as
// `import RealmSwift` does: model files ported from RealmSwift declare `Date` properties with
// that one import.
@_exported public import Foundation
// The layers below (the file format, storage) are targets of their own; their public types
// (ObjectId, Decimal128, RealmError, the schema description) are LMDBRealm's API.
@_exported public import LMDBRealmFormat
import LMDBRealmStorage
