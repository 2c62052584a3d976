import { describe, expect, it } from 'vitest';
import type { CliError } from '../errors.js';
import { mapColumns, parseMapOptions } from './columns.js';
import { validateMember } from './validate.js';

const now = new Date('2026-06-01T12:00:00Z');

describe('mapColumns', () => {
  it('recognises the usual spellings of each field', () => {
    const mapping = mapColumns(['E-mail', 'First Name', 'Surname', 'Opted out', 'Signup date', 'city']);
    expect(Object.fromEntries(mapping.columns)).toEqual({
      'E-mail': 'email',
      'First Name': 'first_name',
      Surname: 'last_name',
      'Opted out': 'unsubscribed',
      'Signup date': 'subscribed_at',
    });
    expect(mapping.apply({ 'E-mail': 'a@example.com', 'First Name': 'Ann', city: 'Oslo' })).toEqual({
      email: 'a@example.com',
      first_name: 'Ann',
    });
  });

  it('lets --map name a column and takes precedence over an alias', () => {
    const mapping = mapColumns(['email', 'work_mail'], parseMapOptions(['email=work_mail']));
    expect(mapping.apply({ email: 'home@example.com', work_mail: 'work@example.com' })).toEqual({
      email: 'work@example.com',
    });
  });

  it('fails with the columns it saw when there is no e-mail column', () => {
    expect(() => mapColumns(['name', 'phone'])).toThrow(/No e-mail column found \(columns: name, phone\)/);
  });

  it('rejects a --map for a column the file does not have, or an unknown field', () => {
    expect(() => mapColumns(['email'], { first_name: 'Vorname' })).toThrow(/no column "Vorname"/);
    expect(() => parseMapOptions(['phone=tel'])).toThrow(/Invalid --map/);
    expect(() => parseMapOptions(['email='])).toThrow(/Invalid --map/);
  });
});

describe('the columns of exports in English, German, French, Dutch and Spanish', () => {
  const read = (header: string, row: string[]) => {
    const columns = header.split(';');
    const mapping = mapColumns(columns);
    const fields = Object.fromEntries(columns.map((column, i) => [column, row[i]]));
    return { mapped: Object.fromEntries(mapping.columns), member: validateMember(mapping.apply(fields), now) };
  };

  it.each([
    [
      'en',
      'E-mail address;First name;Last name;Unsubscribed;Sign-up date',
      ['a@example.org', 'Ann', 'Lee', 'Yes', '2024-05-01'],
    ],
    [
      'de (Excel)',
      'E-Mail;Vorname;Nachname;Abgemeldet;Anmeldedatum',
      ['a@example.org', 'Ann', 'Lee', 'ja', '2024-05-01'],
    ],
    ['de', 'E-Mail-Adresse;Vorname;Name;Abmelden;Anmeldedatum', ['a@example.org', 'Ann', 'Lee', 'X', '2024-05-01']],
    [
      'fr',
      'Adresse e-mail;Prénom;Nom;Désabonné;Date d’inscription',
      ['a@example.org', 'Ann', 'Lee', 'oui', '2024-05-01'],
    ],
    [
      'fr',
      "Courriel;Prénom;Nom de famille;Désinscrit;Date d'inscription",
      ['a@example.org', 'Ann', 'Lee', 'Vrai', '2024-05-01'],
    ],
    [
      'nl',
      'E-mailadres;Voornaam;Achternaam;Afgemeld;Inschrijfdatum',
      ['a@example.org', 'Ann', 'Lee', 'ja', '2024-05-01'],
    ],
    [
      'nl',
      'E-mailadres;Voornaam;Achternaam;Uitgeschreven;Inschrijfdatum',
      ['a@example.org', 'Ann', 'Lee', 'Waar', '2024-05-01'],
    ],
    [
      'es',
      'Correo electrónico;Nombre;Apellidos;Dado de baja;Fecha de alta',
      ['a@example.org', 'Ann', 'Lee', 'Sí', '2024-05-01'],
    ],
    ['es', 'Correo;Nombre;Apellido;Baja;Fecha de alta', ['a@example.org', 'Ann', 'Lee', '1', '2024-05-01']],
  ])('%s: %s reads an opt-out', (_language, header, row) => {
    const { mapped, member } = read(header, row);
    expect(Object.values(mapped)).toEqual(['email', 'first_name', 'last_name', 'unsubscribed', 'subscribed_at']);
    expect(member).toEqual({
      ok: true,
      user: {
        email: 'a@example.org',
        first_name: 'Ann',
        last_name: 'Lee',
        unsubscribed: true,
        subscribed_at: '2024-05-01T00:00:00Z',
      },
    });
  });

  it.each([
    ['en', 'Email;Subscribed', 'no', 'yes'],
    ['en (Shopify)', 'Email;Accepts Email Marketing', 'no', 'yes'],
    ['de', 'E-Mail;Einwilligung', 'nein', 'ja'],
    ['de', 'E-Mail;Newsletter', 'falsch', 'wahr'],
    ['fr', 'E-mail;Consentement', 'non', 'oui'],
    ['nl', 'E-mail;Toestemming', 'nee', 'ja'],
    ['es', 'Correo electrónico;Consentimiento', 'no', 'sí'],
    ['es', 'Correo;Suscrito', 'NO', 'SÍ'],
  ])('%s: %s is an opt-in, read inverted (no or empty: unsubscribed)', (_language, header, no, yes) => {
    expect(read(header, ['a@example.org', no]).member).toEqual({
      ok: true,
      user: { email: 'a@example.org', unsubscribed: true },
    });
    expect(read(header, ['a@example.org', yes]).member).toEqual({
      ok: true,
      user: { email: 'a@example.org', unsubscribed: false },
    });
    expect(read(header, ['a@example.org', '']).member).toEqual({
      ok: true,
      user: { email: 'a@example.org', unsubscribed: true },
    });
  });

  it('reads subscription states in either kind of column, and an opt-out wins over an opt-in', () => {
    expect(read('Email;Status', ['a@example.org', 'x']).mapped).toEqual({ Email: 'email' });
    expect(read('Email;Newsletter', ['a@example.org', 'Abgemeldet']).member).toMatchObject({
      user: { unsubscribed: true },
    });
    expect(read('Email;Abgemeldet', ['a@example.org', 'subscribed']).member).toMatchObject({
      user: { unsubscribed: false },
    });
    expect(read('Email;Newsletter;Abgemeldet', ['a@example.org', 'ja', 'ja']).member).toMatchObject({
      user: { unsubscribed: true },
    });
  });

  it('reads the consent columns of mailing tools and CRMs', () => {
    // Brevo, HubSpot, Salesforce: opt-outs; Klaviyo: a consent state.
    for (const header of ['EMAIL_BLACKLISTED', 'Unsubscribed from all email', 'Email Opt Out'])
      expect(read(`Email;${header}`, ['a@example.org', 'true']).member).toMatchObject({ user: { unsubscribed: true } });
    const klaviyo = (state: string) => read('Email;Email Marketing Consent', ['a@example.org', state]).member;
    expect(klaviyo('SUBSCRIBED')).toMatchObject({ user: { unsubscribed: false } });
    expect(klaviyo('NEVER_SUBSCRIBED')).toMatchObject({ user: { unsubscribed: true } });
    expect(klaviyo('UNSUBSCRIBED')).toMatchObject({ user: { unsubscribed: true } });
  });

  it('splits a full name, and reads "Name" beside a first name as the last name', () => {
    expect(read('Email;Full name', ['a@example.org', 'Anna Maria  Schmidt']).member).toEqual({
      ok: true,
      user: { email: 'a@example.org', first_name: 'Anna Maria', last_name: 'Schmidt' },
    });
    expect(read('Correo;Nombre completo', ['a@example.org', 'Cher']).member).toMatchObject({
      user: { first_name: 'Cher' },
    });
    expect(read('E-Mail;Vorname;Name', ['a@example.org', 'Ann', 'Lee']).mapped).toEqual({
      'E-Mail': 'email',
      Vorname: 'first_name',
      Name: 'last_name',
    });
    expect(read('Courriel;Prénom;Nom', ['a@example.org', 'Ann', 'Lee']).mapped.Nom).toBe('last_name');
  });

  it('ignores case, accents and punctuation in headers', () => {
    expect(Object.values(read('E_MAIL;PRENOM;DESABONNE', ['a@example.org', 'Ann', 'OUI']).mapped)).toEqual([
      'email',
      'first_name',
      'unsubscribed',
    ]);
  });
});

describe('a column that looks like consent is read, or the import stops', () => {
  it.each([
    'Newsletter-Abmeldung am',
    'Marketing consent (email)',
    'Abgemeldet am',
    'Désinscrit le',
    'Afgemeld op',
    'Fecha de baja',
    'UNSUB_TIME',
  ])('stops at %j with --map and --skip-column examples', (header) => {
    const run = () => mapColumns(['email', header]);
    expect(run).toThrow(
      `The column "${header}" looks like consent (opt-out or opt-in) but is not read; nothing was sent.`,
    );
    try {
      run();
    } catch (error) {
      expect((error as CliError).exitCode).toBe(2);
      expect((error as CliError).hint).toMatch(/^Say how to read it: --map '?unsubscribed=/);
      expect((error as CliError).hint).toContain(`unsubscribed=${header}`);
      expect((error as CliError).hint).toContain(`--skip-column ${header.includes(' ') ? `'${header}'` : header}`);
    }
  });

  it('a second opt-out column is not silently left out', () => {
    expect(() => mapColumns(['email', 'Unsubscribed', 'Abgemeldet'])).toThrow(/"Abgemeldet" looks like consent/);
  });

  it('goes on with --skip-column or --map, and leaves consent metadata (Mailchimp OPTIN_IP) alone', () => {
    expect(Object.fromEntries(mapColumns(['email', 'Abgemeldet am'], {}, ['Abgemeldet am']).columns)).toEqual({
      email: 'email',
    });
    expect(
      Object.fromEntries(mapColumns(['email', 'Newsletter?'], parseMapOptions(['subscribed=Newsletter?'])).columns),
    ).toEqual({ email: 'email', 'Newsletter?': 'subscribed' });
    expect(Object.fromEntries(mapColumns(['Email Address', 'OPTIN_TIME', 'OPTIN_IP', 'CONFIRM_TIME']).columns)).toEqual(
      {
        'Email Address': 'email',
        OPTIN_TIME: 'subscribed_at',
      },
    );
  });
});
