package io.samstream.gpu.checkpoint;

/** The byte values of Python's pickle opcodes (protocols 0-5) and their names for error messages. */
final class PickleOpcodes {
    private PickleOpcodes() {}

    static final int MARK = '(';
    static final int STOP = '.';
    static final int POP = '0';
    static final int POP_MARK = '1';
    static final int DUP = '2';
    static final int BINFLOAT = 'G';
    static final int BININT = 'J';
    static final int BININT1 = 'K';
    static final int BININT2 = 'M';
    static final int NONE = 'N';
    static final int BINPERSID = 'Q';
    static final int REDUCE = 'R';
    static final int BINSTRING = 'T';
    static final int SHORT_BINSTRING = 'U';
    static final int BINUNICODE = 'X';
    static final int APPEND = 'a';
    static final int BUILD = 'b';
    static final int DICT = 'd';
    static final int EMPTY_DICT = '}';
    static final int APPENDS = 'e';
    static final int BINGET = 'h';
    static final int LONG_BINGET = 'j';
    static final int LIST = 'l';
    static final int EMPTY_LIST = ']';
    static final int BINPUT = 'q';
    static final int LONG_BINPUT = 'r';
    static final int SETITEM = 's';
    static final int TUPLE = 't';
    static final int EMPTY_TUPLE = ')';
    static final int SETITEMS = 'u';
    static final int GLOBAL = 'c';
    static final int BINBYTES = 'B';
    static final int SHORT_BINBYTES = 'C';
    // protocol 2
    static final int PROTO = 0x80;
    static final int NEWOBJ = 0x81;
    static final int TUPLE1 = 0x85;
    static final int TUPLE2 = 0x86;
    static final int TUPLE3 = 0x87;
    static final int NEWTRUE = 0x88;
    static final int NEWFALSE = 0x89;
    static final int LONG1 = 0x8a;
    static final int LONG4 = 0x8b;
    // protocol 4
    static final int SHORT_BINUNICODE = 0x8c;
    static final int BINUNICODE8 = 0x8d;
    static final int BINBYTES8 = 0x8e;
    static final int EMPTY_SET = 0x8f;
    static final int ADDITEMS = 0x90;
    static final int FROZENSET = 0x91;
    static final int NEWOBJ_EX = 0x92;
    static final int STACK_GLOBAL = 0x93;
    static final int MEMOIZE = 0x94;
    static final int FRAME = 0x95;
    // protocol 5
    static final int BYTEARRAY8 = 0x96;

    /** The opcode's name as Python's pickletools spells it, e.g. {@code "INST"}; "unknown" if none. */
    static String name(int op) {
        return switch (op) {
            case MARK -> "MARK";
            case STOP -> "STOP";
            case POP -> "POP";
            case POP_MARK -> "POP_MARK";
            case DUP -> "DUP";
            case 'F' -> "FLOAT";
            case 'I' -> "INT";
            case BININT -> "BININT";
            case BININT1 -> "BININT1";
            case 'L' -> "LONG";
            case BININT2 -> "BININT2";
            case NONE -> "NONE";
            case 'P' -> "PERSID";
            case BINPERSID -> "BINPERSID";
            case REDUCE -> "REDUCE";
            case 'S' -> "STRING";
            case BINSTRING -> "BINSTRING";
            case SHORT_BINSTRING -> "SHORT_BINSTRING";
            case 'V' -> "UNICODE";
            case BINUNICODE -> "BINUNICODE";
            case APPEND -> "APPEND";
            case BUILD -> "BUILD";
            case GLOBAL -> "GLOBAL";
            case DICT -> "DICT";
            case EMPTY_DICT -> "EMPTY_DICT";
            case APPENDS -> "APPENDS";
            case 'g' -> "GET";
            case BINGET -> "BINGET";
            case 'i' -> "INST";
            case LONG_BINGET -> "LONG_BINGET";
            case LIST -> "LIST";
            case EMPTY_LIST -> "EMPTY_LIST";
            case 'o' -> "OBJ";
            case 'p' -> "PUT";
            case BINPUT -> "BINPUT";
            case LONG_BINPUT -> "LONG_BINPUT";
            case SETITEM -> "SETITEM";
            case TUPLE -> "TUPLE";
            case EMPTY_TUPLE -> "EMPTY_TUPLE";
            case SETITEMS -> "SETITEMS";
            case BINFLOAT -> "BINFLOAT";
            case BINBYTES -> "BINBYTES";
            case SHORT_BINBYTES -> "SHORT_BINBYTES";
            case PROTO -> "PROTO";
            case NEWOBJ -> "NEWOBJ";
            case 0x82 -> "EXT1";
            case 0x83 -> "EXT2";
            case 0x84 -> "EXT4";
            case TUPLE1 -> "TUPLE1";
            case TUPLE2 -> "TUPLE2";
            case TUPLE3 -> "TUPLE3";
            case NEWTRUE -> "NEWTRUE";
            case NEWFALSE -> "NEWFALSE";
            case LONG1 -> "LONG1";
            case LONG4 -> "LONG4";
            case SHORT_BINUNICODE -> "SHORT_BINUNICODE";
            case BINUNICODE8 -> "BINUNICODE8";
            case BINBYTES8 -> "BINBYTES8";
            case EMPTY_SET -> "EMPTY_SET";
            case ADDITEMS -> "ADDITEMS";
            case FROZENSET -> "FROZENSET";
            case NEWOBJ_EX -> "NEWOBJ_EX";
            case STACK_GLOBAL -> "STACK_GLOBAL";
            case MEMOIZE -> "MEMOIZE";
            case FRAME -> "FRAME";
            case BYTEARRAY8 -> "BYTEARRAY8";
            case 0x97 -> "NEXT_BUFFER";
            case 0x98 -> "READONLY_BUFFER";
            default -> "unknown";
        };
    }
}
