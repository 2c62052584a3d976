/**
 * What a request may reach: the organizations of its token (API or device token). Every lookup
 * is confined to them; a row of another organization answers as an unknown one.
 */
export type OrganizationScope = { organizationIds: string[] };
