package console

// Paths of the console's sign-in below the API's base URL.
const (
	// HomePath is the console's start page.
	HomePath = Prefix
	// SignInPath starts a sign-in at the provider.
	SignInPath = "/console/sign-in"
	// CallbackPath is the redirect URI the provider sends the browser
	// back to with its code.
	CallbackPath = "/console/callback"
	// SignOutPath ends the session (POST).
	SignOutPath = "/console/sign-out"
)

// ClientID is the console's client at the built-in issuer: a public
// client (no secret) that proves with PKCE that it asked for the code.
const ClientID = "touchpoint-console"
