// A test that imports CourierTesting writes against Courier's types (HTTPSessionManager,
// Request, the replies' ByteBuffer and HTTPFields), so the module brings Courier with it, as
// the README's example assumes.
@_exported import Courier
