package connections

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/switchboard-hub/switchboard"
)

// maxLabelRunes is the longest label a connection takes, in characters.
const maxLabelRunes = 255

// idShaped matches an id the hub makes (see switchboard.NewID: a lower-case prefix,
// "_" and 26 base32 characters) standing on its own in a label's skeleton.
var idShaped = regexp.MustCompile(`(?:^|[^a-z0-9])[a-z]+_[0-9a-z]{26}(?:$|[^a-z0-9])`)

// cleanLabel returns a label as given by a person, trimmed: an invalid "label" error
// when it is empty, longer than 255 characters, or reads like an id, which the
// connection argument of a tool call takes too (a label that reads like an id could
// pass for the connection it names).
func cleanLabel(raw string) (string, error) {
	label := strings.TrimSpace(raw)
	if label == "" || utf8.RuneCountInString(label) > maxLabelRunes {
		return "", switchboard.Invalid("label", fmt.Sprintf("must be 1 to %d characters", maxLabelRunes))
	}
	if idShaped.MatchString(skeleton(label)) {
		return "", switchboard.Invalid("label", "must not read like an id (a prefix, an underscore and 26 letters and digits): ids name connections too; choose a name")
	}
	return label, nil
}

// checkLabel checks c's label (see cleanLabel) against the other connections of the
// tenant: it must not be one's id, nor look like the label of another connection of
// c's provider that someone who sees c sees too, while differing from it (a Cyrillic
// "о" for a Latin "o"): an invalid "label" error that names neither. c.ID is the
// connection being renamed or reconnected, empty for a new one; a connection of the
// same owner and account (the one an OAuth flow renews) is not another.
func (s *Service) checkLabel(ctx context.Context, tenant switchboard.TenantID, c Connection) error {
	label, err := cleanLabel(c.AccountLabel)
	if err != nil {
		return err
	}
	others, err := s.store.List(ctx, tenant)
	if err != nil {
		return err
	}
	sk := skeleton(label)
	for _, o := range others {
		if o.ID == label {
			return switchboard.Invalid("label", "must not be the id of a connection; choose a name")
		}
		if o.ID == c.ID || o.Provider != c.Provider || !(o.Shared || c.Shared || o.OwnerUserID == c.OwnerUserID) {
			continue
		}
		if c.ID == "" && c.AccountID != "" && o.OwnerUserID == c.OwnerUserID && o.AccountID == c.AccountID {
			continue
		}
		if o.AccountLabel != label && skeleton(o.AccountLabel) == sk {
			return switchboard.Invalid("label", fmt.Sprintf("looks like the label of another %s connection but is spelled differently (look-alike letters, case or spacing); use that label exactly or choose one that reads differently", c.Provider))
		}
	}
	return nil
}

// skeleton is what a label looks like, for telling apart labels that read the same:
// its NFKC form with the common Cyrillic and Greek look-alikes of Latin letters (and
// digits that pass for letters) mapped to them, case folded, without invisible
// formatting characters (zero-width spaces and joiners, direction marks), and with
// each run of spaces as one. A small table stands in for Unicode TR39's confusables,
// which golang.org/x/text does not carry: it covers the scripts that mix with Latin
// unnoticed.
func skeleton(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsSpace(r):
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		if l, ok := lookAlikes[r]; ok {
			r = l
		}
		b.WriteRune(r)
	}
	return cases.Fold().String(b.String())
}

// lookAlikes maps letters of other scripts, and characters within Latin, to the Latin
// letter they pass for, in both cases where the cases look alike.
var lookAlikes = map[rune]rune{
	// Cyrillic.
	'А': 'A', 'а': 'a', 'В': 'B', 'в': 'b', 'Е': 'E', 'е': 'e', 'Ѕ': 'S', 'ѕ': 's', 'І': 'I', 'і': 'i', 'Ј': 'J', 'ј': 'j',
	'К': 'K', 'к': 'k', 'М': 'M', 'м': 'm', 'Н': 'H', 'н': 'h', 'О': 'O', 'о': 'o', 'Р': 'P', 'р': 'p', 'С': 'C', 'с': 'c',
	'Т': 'T', 'т': 't', 'У': 'Y', 'у': 'y', 'Х': 'X', 'х': 'x', 'Ү': 'Y', 'ү': 'y', 'Һ': 'H', 'һ': 'h', 'Ԁ': 'd', 'ԁ': 'd',
	'Ԛ': 'Q', 'ԛ': 'q', 'Ԝ': 'W', 'ԝ': 'w', 'Ӏ': 'l', 'ӏ': 'l', 'Ь': 'b', 'ь': 'b', 'Ѵ': 'V', 'ѵ': 'v', 'Ё': 'Ë', 'ё': 'ë',
	'Ї': 'Ï', 'ї': 'ï', 'З': '3', 'п': 'n', 'г': 'r',
	// Greek.
	'Α': 'A', 'α': 'a', 'Β': 'B', 'β': 'b', 'Ε': 'E', 'ε': 'e', 'Ζ': 'Z', 'Η': 'H', 'η': 'n', 'Ι': 'I', 'ι': 'i', 'Κ': 'K',
	'κ': 'k', 'Μ': 'M', 'Ν': 'N', 'ν': 'v', 'Ο': 'O', 'ο': 'o', 'Ρ': 'P', 'ρ': 'p', 'Τ': 'T', 'τ': 't', 'Υ': 'Y', 'υ': 'u',
	'Χ': 'X', 'χ': 'x', 'γ': 'y', 'ϲ': 'c', 'Ϲ': 'C', 'ϳ': 'j',
	// Latin and digits.
	'ı': 'i', 'ɡ': 'g', 'ɑ': 'a', 'ʟ': 'L', '0': 'O', '1': 'l', 'I': 'l', '|': 'l',
}
