/** The 15 placements every install starts with (rule D1). Seeded by a migration, then data. */
export const DEFAULT_PLACEMENTS: ReadonlyArray<{ id: string; description: string }> = [
  { id: 'header_banner', description: 'full-width banner at the top of a page' },
  { id: 'article_inline', description: 'inside article content' },
  { id: 'feed_sponsored', description: 'native item in a content feed' },
  { id: 'sidebar_top', description: 'top of the sidebar' },
  { id: 'sidebar_bottom', description: 'bottom of the sidebar' },
  { id: 'footer_banner', description: 'full-width banner at the bottom of a page' },
  { id: 'article_top', description: 'above the article body' },
  { id: 'article_bottom', description: 'after the article body' },
  { id: 'homepage_hero', description: 'large slot on the home page' },
  { id: 'category_listing', description: 'inside a section or category listing' },
  { id: 'search_results', description: 'sponsored entry in search results' },
  { id: 'related_content', description: 'sponsored entry in a related-content widget' },
  { id: 'newsletter_inline', description: 'inside an email newsletter rendered by the partner' },
  { id: 'mobile_sticky', description: 'sticky bottom bar on mobile' },
  { id: 'interstitial', description: 'between two page views' },
];

const SLUG = /^[a-z0-9]+(?:[_-][a-z0-9]+)*$/;

/** A placement id is a lower-case slug of at most 64 characters. */
export function isPlacementId(value: string): boolean {
  return value.length <= 64 && SLUG.test(value);
}
