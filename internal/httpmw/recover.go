package httpmw

import (
	"fmt"
	"net/http"
	"runtime/debug"
)

// Recover hands a panicking handler's panic to panicked, as an error with
// the panic and its stack; answered says the handler had begun its answer,
// too late to change it. Under Log, that is known; elsewhere answered is
// false. http.ErrAbortHandler, the documented way to abort a response,
// goes on up.
func Recover(panicked func(w http.ResponseWriter, r *http.Request, err error, answered bool), next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler { // the documented way to abort a response
				panic(v)
			}
			rec, ok := w.(*recorder)
			panicked(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()), ok && rec.status != 0)
		}()
		next.ServeHTTP(w, r)
	})
}
