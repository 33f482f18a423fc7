package console

import "net/http"

// The console's side of its sign-in (package console/signin): the
// sign-in's routes are served on the console's handler, and it answers
// with the console's own pages.

// HandleFunc serves pattern on the console's handler.
func (h *Handler) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	h.mux.HandleFunc(pattern, handler)
}

// SignInPage answers with one of the sign-in's pages: its title and text
// by key, and a way to sign in (again).
func (h *Handler) SignInPage(w http.ResponseWriter, r *http.Request, status int, key string) {
	h.render(w, r, status, "signin", key+"_title", "", errorView{Key: key})
}

// Fail answers an internal error with a 500 page that hides it.
func (h *Handler) Fail(w http.ResponseWriter, r *http.Request, err error) { h.fail(w, r, err) }

// Forbidden answers 403 with the console's page.
func (h *Handler) Forbidden(w http.ResponseWriter, r *http.Request) { h.forbidden(w, r) }

// SetHeaders sets the headers of every console page, for an answer that
// is not a page (a redirect).
func (h *Handler) SetHeaders(hd http.Header) { h.views.SetHeaders(hd) }
