// The header spellings an import recognises for each member column, in English, German, French,
// Dutch and Spanish, as exports of spreadsheets, shops and mailing tools write them; and the words
// that make a header look like consent, so that a consent column is never dropped unread.
import type { SignupUser } from '../generated/signup-user.js';

/** A field of a sign-up (the users item of POST /members/signups). */
export type MemberField = keyof SignupUser;

/**
 * What a column can be read as: a sign-up field, a full name (split into first and last name),
 * or an opt-in (`subscribed`: yes means subscribed, so it is read inverted into `unsubscribed`).
 */
export type ImportField = MemberField | 'name' | 'subscribed';

/** Lower case, no accents, letters and digits only: "Date d'inscription" → "datedinscription". */
export const normalizeHeader = (name: string): string =>
  name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/ß/g, 'ss')
    .replace(/[^a-z0-9]/g, '');

/**
 * The spellings of each field (normalised), in column order. A Record of every field: it
 * compiles only while it names each field, and no other.
 */
export const ALIASES: Record<ImportField, string[]> = {
  email: [
    ...['email', 'emailaddress', 'mail', 'mailaddress', 'emailid'],
    ...['emailadresse', 'mailadresse'], // de
    ...['courriel', 'adressecourriel', 'adresseemail', 'adressemail', 'adresseelectronique', 'mel'], // fr
    ...['emailadres', 'mailadres'], // nl
    ...['correo', 'correoelectronico', 'direcciondecorreo', 'direcciondecorreoelectronico', 'direccionemail'], // es
  ],
  first_name: [
    ...['firstname', 'givenname', 'forename', 'first'],
    ...['vorname', 'rufname'], // de
    ...['prenom'], // fr
    ...['voornaam', 'roepnaam'], // nl
    ...['nombre', 'nombrepila'], // es
  ],
  last_name: [
    ...['lastname', 'surname', 'familyname', 'last'],
    ...['nachname', 'familienname', 'zuname'], // de
    ...['nomdefamille', 'nomfamille'], // fr
    ...['achternaam', 'familienaam'], // nl
    ...['apellido', 'apellidos', 'primerapellido'], // es
  ],
  name: [
    ...['name', 'fullname', 'contactname', 'displayname', 'completename'],
    ...['vollstandigername', 'vollername', 'komplettername'], // de
    ...['nom', 'nomcomplet', 'nometprenom', 'prenometnom'], // fr
    ...['naam', 'volledigenaam'], // nl
    ...['nombrecompleto', 'nombreyapellidos', 'nombreapellidos'], // es
  ],
  unsubscribed: [
    ...['unsubscribed', 'unsubscribe', 'optedout', 'optout', 'emailoptout', 'hasoptedoutofemail', 'donotemail'],
    ...['unsubscribedfromallemail', 'blacklisted', 'emailblacklisted', 'blocklisted', 'emailblocklisted'],
    ...['abgemeldet', 'abmelden', 'abmeldung', 'newsletterabgemeldet', 'ausgetragen', 'abbestellt'], // de
    ...['desabonne', 'desabonnee', 'desabonnement', 'desinscrit', 'desinscrite', 'desinscription'], // fr
    ...['afgemeld', 'afmelden', 'afmelding', 'uitgeschreven', 'uitschrijving'], // nl
    ...['dadodebaja', 'dadadebaja', 'baja', 'debaja', 'desuscrito', 'desuscrita', 'desuscripcion'], // es
  ],
  subscribed: [
    ...['subscribed', 'optin', 'optedin', 'emailoptin', 'consent', 'emailconsent', 'marketingconsent'],
    ...['newsletter', 'newsletterconsent', 'acceptsmarketing', 'acceptsemailmarketing', 'emailmarketing'],
    ...['emailmarketingconsent', 'marketingemailconsent'],
    ...['einwilligung', 'newslettereinwilligung', 'werbeeinwilligung', 'zustimmung', 'abonniert', 'angemeldet'], // de
    ...['newsletterangemeldet', 'newsletteranmeldung', 'newsletterabonniert'], // de
    ...['consentement', 'abonne', 'abonnee', 'inscrit', 'inscrite', 'accordnewsletter', 'optinnewsletter'], // fr
    ...['toestemming', 'aangemeld', 'ingeschreven', 'geabonneerd', 'nieuwsbrief'], // nl
    ...['consentimiento', 'suscrito', 'suscrita', 'suscripcion', 'boletin', 'aceptanewsletter'], // es
  ],
  subscribed_at: [
    ...['subscribedat', 'subscriptiondate', 'signupdate', 'signedupat', 'joinedat', 'joined', 'datejoined'],
    ...['optintime', 'optindate', 'confirmtime', 'subscribedon', 'signedupon'],
    ...['anmeldedatum', 'anmeldungam', 'angemeldetam', 'registrierungsdatum', 'eintrittsdatum', 'abonniertseit'], // de
    ...['datedinscription', 'dateinscription', 'inscritle', 'datedabonnement', 'dateabonnement'], // fr
    ...['inschrijfdatum', 'inschrijvingsdatum', 'aanmelddatum', 'datumaanmelding', 'ingeschrevenop'], // nl
    ...['fechadealta', 'fechaalta', 'fechadesuscripcion', 'fechadeinscripcion', 'fechaderegistro', 'fecharegistro'], // es
  ],
};

/**
 * Parts of a header that speak of consent in these languages: a header holding one that is not
 * read as a consent field stops the import (consent is never dropped silently).
 */
const CONSENT_STEMS = [
  ...['subscri', 'optin', 'optout', 'optedin', 'optedout', 'consent', 'newsletter', 'gdpr', 'donotemail', 'unsub'],
  ...['blacklist', 'blocklist'],
  ...['acceptsmarketing', 'acceptsemail', 'emailpermission', 'marketingpermission'],
  ...['abmeld', 'abgemeld', 'anmeld', 'angemeld', 'einwillig', 'zustimm', 'abonn', 'abbestell', 'ausgetragen', 'dsgvo'], // de
  ...['desabonn', 'desinscri', 'inscri', 'rgpd'], // fr (abonn, consent: above)
  ...['afmeld', 'afgemeld', 'aanmeld', 'aangemeld', 'uitschrijv', 'uitgeschreven', 'ingeschreven', 'inschrijv'], // nl
  ...['toestemming', 'nieuwsbrief', 'geabonneerd'], // nl
  ...['suscri', 'consentim', 'boletin', 'debaja', 'dadodebaja'], // es
];
/** Whole words only: as parts they are in too many other words ("baja" in "trabajador"). */
const CONSENT_WORDS = ['baja', 'alta'];
/** Where and by what consent was given (Mailchimp's OPTIN_IP): no answer to lose. */
const CONSENT_METADATA = /(ip|ipaddress|id)$/;

/** Whether a header speaks of consent (opt-in, opt-out, newsletter…), in any of these languages. */
export function looksLikeConsent(header: string): boolean {
  const folded = normalizeHeader(header);
  if (CONSENT_METADATA.test(folded)) return false;
  if (CONSENT_STEMS.some((stem) => folded.includes(stem))) return true;
  const words = header
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/);
  return words.some((word) => CONSENT_WORDS.includes(word));
}
