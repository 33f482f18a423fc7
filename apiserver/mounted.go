package apiserver

import "net/http"

// mountedAPI is what the packages whose routes the API mounts
// (templateapi, webhookapi, reviewapi, …) ask of it (apiwire.API): the
// caller from the request's principal, the API's reading of JSON bodies,
// and fail.
type mountedAPI struct{ s *server }

func (m mountedAPI) AccountID(r *http.Request) string { return accountID(r) }
func (m mountedAPI) ClientID(r *http.Request) string  { return clientID(r) }

func (m mountedAPI) DecodeJSON(w http.ResponseWriter, r *http.Request, dst any) error {
	return m.s.decodeJSON(w, r, dst)
}

func (m mountedAPI) Fail(w http.ResponseWriter, r *http.Request, err error) { m.s.fail(w, r, err) }
