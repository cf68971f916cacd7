import fastJsonStringify from 'fast-json-stringify';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { Discriminated } from './common-schemas.js';
import { buildSerializer, forSerialization } from './serialization.js';

const Cat = Type.Object({ kind: Type.Literal('CAT'), name: Type.String(), lives: Type.Integer() });
const Dog = Type.Object({ kind: Type.Literal('DOG'), name: Type.String(), bornAt: Type.String({ format: 'date-time' }) });
const Fish = Type.Object({ kind: Type.Literal('FISH'), fins: Type.Integer() });
const Pet = Discriminated('kind', [Cat, Dog, Fish], { description: 'A pet.' });
const Page = Type.Object({ data: Type.Array(Pet), owner: Type.Optional(Pet) });

const pets = [
  { kind: 'CAT', name: 'Tom', lives: 9, fins: 4 },
  { kind: 'DOG', name: 'Rex', bornAt: '2020-01-01T00:00:00.000Z', lives: 1 },
  { kind: 'FISH', fins: 3, name: 'Nemo' },
];

describe('forSerialization', () => {
  it('turns a discriminated oneOf into a chain on the tag, wherever it is nested', () => {
    const rewritten = forSerialization(Page) as any;
    expect(JSON.stringify(rewritten)).not.toContain('oneOf');
    const item = rewritten.properties.data.items;
    expect(item.if).toEqual({ type: 'object', properties: { kind: { const: 'CAT' } }, required: ['kind'] });
    expect(item.else.if).toEqual({ type: 'object', properties: { kind: { const: 'DOG' } }, required: ['kind'] });
    expect(item.else.else.properties.kind.const).toBe('FISH');
    expect(rewritten.properties.owner.if).toBeDefined();
  });

  it('serializes exactly as the oneOf does, branch by branch', () => {
    const viaOneOf = fastJsonStringify(Page as object);
    const viaChain = buildSerializer()({ schema: Page });
    const value = { data: pets, owner: pets[1] };
    expect(viaChain(value)).toBe(viaOneOf(value));
    expect(JSON.parse(viaChain(value)).data).toEqual([
      { kind: 'CAT', name: 'Tom', lives: 9 },
      { kind: 'DOG', name: 'Rex', bornAt: '2020-01-01T00:00:00.000Z' },
      { kind: 'FISH', fins: 3 },
    ]);
  });

  it('leaves the original schema and unions without a discriminator alone', () => {
    const plain = { oneOf: [Cat, Dog] };
    expect(forSerialization(plain)).toEqual(plain);
    const untagged = { oneOf: [Cat, Type.Object({ kind: Type.String() })], discriminator: { propertyName: 'kind' } };
    expect(forSerialization(untagged)).toEqual(untagged);
    const before = JSON.stringify(Page);
    forSerialization(Page);
    expect(JSON.stringify(Page)).toBe(before);
  });

  it('resolves shared schemas through the rewritten copies', () => {
    const serialize = buildSerializer({ Pet: { ...Pet, $id: 'Pet' } })({ schema: Type.Object({ pet: Type.Unsafe({ $ref: 'Pet' }) }) });
    expect(JSON.parse(serialize({ pet: pets[2] }))).toEqual({ pet: { kind: 'FISH', fins: 3 } });
  });
});
