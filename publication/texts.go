package publication

import (
	"slices"
	"strconv"
	"strings"

	"github.com/touchpoint/touchpoint/locale"
)

// texts are the strings of the widget and the verify page, one table per
// language; a test fails when a table lacks a key English has, or has one
// it lacks. %s and %d are filled in with fmt, after which html/template
// escapes the whole.
var texts = map[string]map[string]string{
	"en": {
		"decimal":         ".",
		"title":           "Reviews of %s",
		"ratedOutOf5":     "Rated %s out of 5",
		"starsOutOf5":     "%d out of 5 stars",
		"reviewsOne":      "1 review",
		"reviewsOther":    "%d reviews",
		"noReviews":       "No reviews yet.",
		"allReviews":      "All reviews",
		"olderReviews":    "Older reviews",
		"replyFrom":       "Reply from %s",
		"verifiedReview":  "Verified review",
		"products":        "Products rated",
		"verifyTitle":     "Is this review genuine?",
		"verifyGenuine":   "This review of %s was written after an invite for a real transaction on %s, and it is unchanged since %s.",
		"verifyNoEvent":   "This review of %s was written after an invite, and it is unchanged since %s.",
		"verifyInvited":   "The invite was sent on %s.",
		"verifySigned":    "Touchpoint signed this statement with the shop's publication key %s. Anyone can check the proof below offline with any JOSE library and the keys published at:",
		"verifyProofOK":   "The proof you brought is valid and matches this review as it is now.",
		"verifyProofOld":  "The proof you brought is valid, but the review has changed since it was signed.",
		"verifyProofBad":  "The proof you brought is not a valid proof of this shop.",
		"verifyProof":     "Proof",
		"verifyTheReview": "The review",
	},
	"de": {
		"decimal":         ",",
		"title":           "Bewertungen von %s",
		"ratedOutOf5":     "Bewertet mit %s von 5",
		"starsOutOf5":     "%d von 5 Sternen",
		"reviewsOne":      "1 Bewertung",
		"reviewsOther":    "%d Bewertungen",
		"noReviews":       "Noch keine Bewertungen.",
		"allReviews":      "Alle Bewertungen",
		"olderReviews":    "Ältere Bewertungen",
		"replyFrom":       "Antwort von %s",
		"verifiedReview":  "Verifizierte Bewertung",
		"products":        "Bewertete Produkte",
		"verifyTitle":     "Ist diese Bewertung echt?",
		"verifyGenuine":   "Diese Bewertung von %s wurde nach einer Einladung zu einem echten Kauf am %s geschrieben und ist seit %s unverändert.",
		"verifyNoEvent":   "Diese Bewertung von %s wurde nach einer Einladung geschrieben und ist seit %s unverändert.",
		"verifyInvited":   "Die Einladung wurde am %s verschickt.",
		"verifySigned":    "Touchpoint hat diese Aussage mit dem Veröffentlichungsschlüssel %s des Shops signiert. Jede und jeder kann den Nachweis unten offline mit einer beliebigen JOSE-Bibliothek und den hier veröffentlichten Schlüsseln prüfen:",
		"verifyProofOK":   "Der mitgebrachte Nachweis ist gültig und passt zur Bewertung, wie sie jetzt ist.",
		"verifyProofOld":  "Der mitgebrachte Nachweis ist gültig, aber die Bewertung wurde seit der Signatur geändert.",
		"verifyProofBad":  "Der mitgebrachte Nachweis ist kein gültiger Nachweis dieses Shops.",
		"verifyProof":     "Nachweis",
		"verifyTheReview": "Die Bewertung",
	},
	"da": {
		"decimal":         ",",
		"title":           "Anmeldelser af %s",
		"ratedOutOf5":     "Bedømt %s ud af 5",
		"starsOutOf5":     "%d ud af 5 stjerner",
		"reviewsOne":      "1 anmeldelse",
		"reviewsOther":    "%d anmeldelser",
		"noReviews":       "Ingen anmeldelser endnu.",
		"allReviews":      "Alle anmeldelser",
		"olderReviews":    "Ældre anmeldelser",
		"replyFrom":       "Svar fra %s",
		"verifiedReview":  "Verificeret anmeldelse",
		"products":        "Bedømte produkter",
		"verifyTitle":     "Er denne anmeldelse ægte?",
		"verifyGenuine":   "Denne anmeldelse af %s blev skrevet efter en invitation til et rigtigt køb den %s og er uændret siden %s.",
		"verifyNoEvent":   "Denne anmeldelse af %s blev skrevet efter en invitation og er uændret siden %s.",
		"verifyInvited":   "Invitationen blev sendt den %s.",
		"verifySigned":    "Touchpoint har signeret denne erklæring med butikkens publiceringsnøgle %s. Alle kan kontrollere beviset nedenfor offline med et hvilket som helst JOSE-bibliotek og nøglerne, der er offentliggjort her:",
		"verifyProofOK":   "Det bevis, du har medbragt, er gyldigt og passer til anmeldelsen, som den er nu.",
		"verifyProofOld":  "Det bevis, du har medbragt, er gyldigt, men anmeldelsen er ændret, siden den blev signeret.",
		"verifyProofBad":  "Det bevis, du har medbragt, er ikke et gyldigt bevis fra denne butik.",
		"verifyProof":     "Bevis",
		"verifyTheReview": "Anmeldelsen",
	},
	"fr": {
		"decimal":         ",",
		"title":           "Avis sur %s",
		"ratedOutOf5":     "Noté %s sur 5",
		"starsOutOf5":     "%d étoiles sur 5",
		"reviewsOne":      "1 avis",
		"reviewsOther":    "%d avis",
		"noReviews":       "Pas encore d’avis.",
		"allReviews":      "Tous les avis",
		"olderReviews":    "Avis plus anciens",
		"replyFrom":       "Réponse de %s",
		"verifiedReview":  "Avis vérifié",
		"products":        "Produits notés",
		"verifyTitle":     "Cet avis est-il authentique ?",
		"verifyGenuine":   "Cet avis sur %s a été écrit après une invitation liée à un achat réel du %s, et il n’a pas changé depuis le %s.",
		"verifyNoEvent":   "Cet avis sur %s a été écrit après une invitation, et il n’a pas changé depuis le %s.",
		"verifyInvited":   "L’invitation a été envoyée le %s.",
		"verifySigned":    "Touchpoint a signé cette déclaration avec la clé de publication %s de la boutique. Chacun peut vérifier la preuve ci-dessous hors ligne avec n’importe quelle bibliothèque JOSE et les clés publiées ici :",
		"verifyProofOK":   "La preuve que vous avez apportée est valide et correspond à l’avis tel qu’il est aujourd’hui.",
		"verifyProofOld":  "La preuve que vous avez apportée est valide, mais l’avis a changé depuis sa signature.",
		"verifyProofBad":  "La preuve que vous avez apportée n’est pas une preuve valide de cette boutique.",
		"verifyProof":     "Preuve",
		"verifyTheReview": "L’avis",
	},
	"es": {
		"decimal":         ",",
		"title":           "Opiniones sobre %s",
		"ratedOutOf5":     "Valorado con %s de 5",
		"starsOutOf5":     "%d de 5 estrellas",
		"reviewsOne":      "1 opinión",
		"reviewsOther":    "%d opiniones",
		"noReviews":       "Todavía no hay opiniones.",
		"allReviews":      "Todas las opiniones",
		"olderReviews":    "Opiniones anteriores",
		"replyFrom":       "Respuesta de %s",
		"verifiedReview":  "Opinión verificada",
		"products":        "Productos valorados",
		"verifyTitle":     "¿Es auténtica esta opinión?",
		"verifyGenuine":   "Esta opinión sobre %s se escribió tras una invitación por una compra real del %s y no ha cambiado desde el %s.",
		"verifyNoEvent":   "Esta opinión sobre %s se escribió tras una invitación y no ha cambiado desde el %s.",
		"verifyInvited":   "La invitación se envió el %s.",
		"verifySigned":    "Touchpoint firmó esta declaración con la clave de publicación %s de la tienda. Cualquiera puede comprobar la prueba de abajo sin conexión con cualquier biblioteca JOSE y las claves publicadas aquí:",
		"verifyProofOK":   "La prueba que ha traído es válida y coincide con la opinión tal como es ahora.",
		"verifyProofOld":  "La prueba que ha traído es válida, pero la opinión ha cambiado desde que se firmó.",
		"verifyProofBad":  "La prueba que ha traído no es una prueba válida de esta tienda.",
		"verifyProof":     "Prueba",
		"verifyTheReview": "La opinión",
	},
	"nl": {
		"decimal":         ",",
		"title":           "Beoordelingen van %s",
		"ratedOutOf5":     "Beoordeeld met %s van 5",
		"starsOutOf5":     "%d van 5 sterren",
		"reviewsOne":      "1 beoordeling",
		"reviewsOther":    "%d beoordelingen",
		"noReviews":       "Nog geen beoordelingen.",
		"allReviews":      "Alle beoordelingen",
		"olderReviews":    "Oudere beoordelingen",
		"replyFrom":       "Reactie van %s",
		"verifiedReview":  "Geverifieerde beoordeling",
		"products":        "Beoordeelde producten",
		"verifyTitle":     "Is deze beoordeling echt?",
		"verifyGenuine":   "Deze beoordeling van %s is geschreven na een uitnodiging voor een echte aankoop op %s en is sinds %s niet gewijzigd.",
		"verifyNoEvent":   "Deze beoordeling van %s is geschreven na een uitnodiging en is sinds %s niet gewijzigd.",
		"verifyInvited":   "De uitnodiging is verstuurd op %s.",
		"verifySigned":    "Touchpoint heeft deze verklaring ondertekend met publicatiesleutel %s van de winkel. Iedereen kan het bewijs hieronder offline controleren met elke JOSE-bibliotheek en de sleutels die hier zijn gepubliceerd:",
		"verifyProofOK":   "Het bewijs dat u meebracht is geldig en klopt met de beoordeling zoals die nu is.",
		"verifyProofOld":  "Het bewijs dat u meebracht is geldig, maar de beoordeling is gewijzigd sinds de ondertekening.",
		"verifyProofBad":  "Het bewijs dat u meebracht is geen geldig bewijs van deze winkel.",
		"verifyProof":     "Bewijs",
		"verifyTheReview": "De beoordeling",
	},
}

// Locales lists the languages of the widget and the verify page.
func Locales() []string { return locale.Names(texts) }

// Pick is the language for a requested locale ("de_AT" → "de"; English
// when there is none).
func Pick(requested string) string {
	return locale.Pick(requested, func(l string) bool { return texts[l] != nil })
}

// AcceptLanguage picks the language of a reader from an Accept-Language
// header: the first by preference that the pages speak, else English.
func AcceptLanguage(header string) string {
	type choice struct {
		tag string
		q   float64
	}
	var cs []choice
	for i, part := range strings.Split(header, ",") {
		if i >= 20 {
			break // nobody prefers twenty languages
		}
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		if tag != "" && tag != "*" && q > 0 {
			cs = append(cs, choice{tag, q})
		}
	}
	slices.SortStableFunc(cs, func(a, b choice) int {
		switch {
		case a.q > b.q:
			return -1
		case a.q < b.q:
			return 1
		}
		return 0
	})
	for _, c := range cs {
		if l := locale.Pick(c.tag, func(l string) bool { return texts[l] != nil }); texts[l] != nil &&
			strings.HasPrefix(strings.ToLower(strings.ReplaceAll(c.tag, "-", "_")), l) {
			return l
		}
	}
	return locale.Default
}
