/** One reason a wallet would refuse a pass, and what to do about it. */
export interface PassProblem {
  /** Stable, for scripts: `manifest_hash`, `signature_invalid`, `certificate_expired`, … */
  code: PassProblemCode;
  message: string;
  fix: string;
}

export type PassProblemCode =
  | 'not_a_pkpass'
  | 'pass_json_invalid'
  | 'manifest_missing'
  | 'manifest_invalid'
  | 'manifest_unlisted_file'
  | 'manifest_extra_entry'
  | 'manifest_hash'
  | 'signature_missing'
  | 'signature_invalid'
  | 'certificate_chain'
  | 'certificate_expired'
  | 'certificate_not_yet_valid'
  | 'pass_type_mismatch'
  | 'team_mismatch'
  | 'image_missing'
  | 'date_format'
  | 'barcode_format'
  | 'barcode_message'
  | 'barcode_encoding'
  | 'key_missing'
  | 'key_invalid';
