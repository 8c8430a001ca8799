/**
 * The token balances a transaction's meta carries are read of the accounts as LiteSVM holds them,
 * with each account's mint and owner names cached: an address that changes hands or mints between
 * transactions must be named as it is now, never as it was.
 */
import type { Address } from "@solana/kit";
import { describe, expect, it } from "vitest";
import { addressOf, decodeAddressBytes } from "../../src/chain/base58.js";
import { TOKEN_PROGRAM } from "../../src/chain/programs.js";
import { TokenBalanceReader } from "../../src/chain/sandbox/meta-capture.js";
import { createSvm, putAccount } from "../../src/chain/sandbox/svm.js";
import { MINT_SIZE, TOKEN_ACCOUNT_SIZE } from "../../src/chain/token-layout.js";

const key = (fill: number) => addressOf(new Uint8Array(32).fill(fill));

function mintData(decimals: number): Uint8Array {
  const data = new Uint8Array(MINT_SIZE);
  data[44] = decimals;
  data[45] = 1; // initialized
  return data;
}

function tokenAccountData(mint: Address, owner: Address, amount: bigint): Uint8Array {
  const data = new Uint8Array(TOKEN_ACCOUNT_SIZE);
  data.set(decodeAddressBytes(mint), 0);
  data.set(decodeAddressBytes(owner), 32);
  new DataView(data.buffer).setBigUint64(64, amount, true);
  data[108] = 1; // initialized
  return data;
}

describe("TokenBalanceReader", () => {
  it("names an account by what it holds now: a new owner or a new mint at the same address", () => {
    const svm = createSvm();
    const [mintA, mintB, alice, bob, account] = [key(1), key(2), key(3), key(4), key(5)];
    putAccount(svm, {
      address: mintA,
      lamports: 1n,
      owner: TOKEN_PROGRAM,
      executable: false,
      data: mintData(6),
    });
    putAccount(svm, {
      address: mintB,
      lamports: 1n,
      owner: TOKEN_PROGRAM,
      executable: false,
      data: mintData(9),
    });
    const reader = new TokenBalanceReader();

    expect(reader.read(svm, account, TOKEN_PROGRAM, tokenAccountData(mintA, alice, 5n))).toEqual({
      mint: mintA,
      owner: alice,
      programId: TOKEN_PROGRAM,
      amount: 5n,
      decimals: 6,
    });
    expect(reader.read(svm, account, TOKEN_PROGRAM, tokenAccountData(mintA, bob, 7n))).toMatchObject({
      mint: mintA,
      owner: bob,
      amount: 7n,
    });
    expect(
      reader.read(svm, account, TOKEN_PROGRAM, tokenAccountData(mintB, bob, 2n ** 64n - 1n)),
    ).toMatchObject({ mint: mintB, owner: bob, amount: 2n ** 64n - 1n, decimals: 9 });
  });

  it("reads no balance of an uninitialized account, of a mint, or of an account of an unknown mint", () => {
    const svm = createSvm();
    const reader = new TokenBalanceReader();
    const uninitialized = tokenAccountData(key(1), key(3), 5n);
    uninitialized[108] = 0;
    expect(reader.read(svm, key(5), TOKEN_PROGRAM, uninitialized)).toBeNull();
    expect(reader.read(svm, key(5), TOKEN_PROGRAM, mintData(6))).toBeNull();
    expect(reader.read(svm, key(6), TOKEN_PROGRAM, tokenAccountData(key(7), key(3), 1n))).toBeNull();
  });
});
