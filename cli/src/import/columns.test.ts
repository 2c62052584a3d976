import { describe, expect, it } from 'vitest';
import { mapColumns, parseMapOptions } from './columns.js';

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
