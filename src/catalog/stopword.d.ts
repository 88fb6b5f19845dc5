/** The part of the `stopword` package the search reads (query-terms.ts): its English stop-word list. */
declare module 'stopword' {
  export const eng: readonly string[];
}
